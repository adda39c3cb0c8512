import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { BODY_LIMIT_BYTES } from '../src/common/configure-app.js';
import { waitFor } from '../../../test/support/wait.js';
import { backends, bearer, createTestApp, freshName, paddedBody, viewOf } from './support/test-app.js';

describe.each(backends)('registration API on $label', (backend) => {
  let app: INestApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await createTestApp(backend.config());
    http = request(app.getHttpServer());
  });

  afterAll(async () => {
    await app?.close();
  });

  const register = (username: unknown) => http.post('/users').send({ username });
  const available = async (name: string) =>
    (await http.get(`/usernames/${encodeURIComponent(name)}`).expect(200)).body.available;
  const byName = async (name: string) => (await http.get('/users').query({ username: name }).expect(200)).body;
  /** The read model's answer once it converged (on a shared repository the relay feeds it after the write answered). */
  const byNameSettles = (name: string, expected: unknown) =>
    waitFor(`the read model to answer ${JSON.stringify(expected)} for ${name}`, async () => {
      expect(await byName(name)).toEqual(expected);
      return true;
    });

  it('GET /health answers 200', async () => {
    await http.get('/health').expect(200);
  });

  describe('POST /users', () => {
    it('registers a user with a generated ID, version 1 and the case-folded name', async () => {
      const name = freshName('Reg');
      const res = await register(name).expect(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        username: name.toLowerCase(),
        version: 1,
        secret: expect.any(String),
      });
      expect(res.body.id).toMatch(/^[0-9A-Za-z]{15}$/);
      expect(res.headers.etag).toBe('"1"');
      expect(await available(name)).toBe(false);
      await http.get(`/users/${res.body.id}`).expect(200, viewOf(res.body));
      await byNameSettles(name, [viewOf(res.body)]);
    });

    it('answers 409 for a name already taken, in any case, and stores nothing', async () => {
      const name = freshName('dup');
      const first = await register(name).expect(201);
      const res = await register(name.toUpperCase()).expect(409);
      expect(res.body.message).toContain('already taken');
      await byNameSettles(name, [viewOf(first.body)]);
    });

    const bad: Array<[string, () => request.Test]> = [
      ['a missing username', () => http.post('/users').send({})],
      ['a numeric username', () => http.post('/users').send({ username: 42 })],
      ['an operator object', () => http.post('/users').send({ username: { $ne: null } })],
      ['an array of names', () => http.post('/users').send({ username: ['abc', 'def'] })],
      ['a name of 2 characters', () => http.post('/users').send({ username: 'ab' })],
      ['a name of 33 characters', () => http.post('/users').send({ username: 'a'.repeat(33) })],
      ['a name with a space', () => http.post('/users').send({ username: 'bad name' })],
      ['a name starting with a dot', () => http.post('/users').send({ username: '.hidden' })],
      ['a non-ASCII name', () => http.post('/users').send({ username: 'jürgen' })],
      ['an unknown field', () => http.post('/users').send({ username: freshName(), admin: true })],
      ['an array body', () => http.post('/users').send([{ username: freshName() }])],
      ['malformed JSON', () => http.post('/users').set('content-type', 'application/json').send('{"username": ')],
    ];
    it.each(bad)('answers 400 with a message for %s', async (_label, send) => {
      const res = await send().expect(400);
      expect(JSON.stringify(res.body.message)).toMatch(/\w/);
    });

    it(`answers 400 "too large" for a valid body over ${BODY_LIMIT_BYTES / 1024} KB, and 201 for the same body under it`, async () => {
      const sendJson = (body: string) => http.post('/users').set('content-type', 'application/json').send(body);
      const [over, under] = [freshName('big'), freshName('big')];
      const res = await sendJson(paddedBody(over, 20_000)).expect(400);
      expect(res.body.message).toContain('too large');
      await sendJson(paddedBody(under, BODY_LIMIT_BYTES - 100)).expect(201);
      expect(await available(over)).toBe(true);
      expect(await available(under)).toBe(false);
    });

    it('writes nothing on bad input: the name of a refused request stays free', async () => {
      const name = freshName('pad');
      await http.post('/users').send({ username: name, extra: 1 }).expect(400);
      await http.post('/users').set('content-type', 'application/json').send(paddedBody(name, 20_000)).expect(400);
      expect(await available(name)).toBe(true);
      expect(await byName(name)).toEqual([]);
    });
  });

  describe('GET /users/:id', () => {
    it('answers 404 for an unknown id, a malformed id and an operator-looking id', async () => {
      await http.get('/users/000000000000000').expect(404);
      await http.get(`/users/${encodeURIComponent('{"$ne":null}')}`).expect(404);
      await http.get(`/users/${'z'.repeat(2000)}`).expect(404);
    });
  });

  describe('PATCH /users/:id/username', () => {
    it('renames with If-Match: version + 1, the old name freed, the new one held, the read model moved', async () => {
      const [oldName, newName] = [freshName('old'), freshName('new')];
      const { body: user } = await register(oldName).expect(201);
      const res = await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .set('If-Match', '"1"')
        .send({ username: newName.toUpperCase() })
        .expect(200);
      expect(res.body).toEqual({ id: user.id, username: newName, version: 2 });
      expect(res.headers.etag).toBe('"2"');
      expect(await available(oldName)).toBe(true);
      expect(await available(newName)).toBe(false);
      // Once the rename's event is applied, the user is found by its new name only.
      await byNameSettles(newName, [res.body]);
      expect(await byName(oldName)).toEqual([]);
      // The freed name can be registered by someone else.
      await register(oldName).expect(201);
    });

    it('accepts If-Match as 1, "1" and W/"1"', async () => {
      for (const ifMatch of ['1', '"1"', 'W/"1"']) {
        const { body: user } = await register(freshName('im')).expect(201);
        await http
          .patch(`/users/${user.id}/username`)
          .set('Authorization', bearer(user))
          .set('If-Match', ifMatch)
          .send({ username: freshName('im') })
          .expect(200);
      }
    });

    it('answers 409 when the new name is taken, leaving both names and the user as they were', async () => {
      const [a, b] = [freshName('a'), freshName('b')];
      const { body: userA } = await register(a).expect(201);
      await register(b).expect(201);
      await http
        .patch(`/users/${userA.id}/username`)
        .set('Authorization', bearer(userA))
        .set('If-Match', '"1"')
        .send({ username: b })
        .expect(409);
      await http.get(`/users/${userA.id}`).expect(200, viewOf(userA));
      expect(await available(a)).toBe(false);
      await byNameSettles(a, [viewOf(userA)]);
    });

    it('answers 412 for a stale If-Match and touches no name', async () => {
      const [oldName, newName] = [freshName('st'), freshName('st')];
      const { body: user } = await register(oldName).expect(201);
      await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .set('If-Match', '"1"')
        .send({ username: freshName('st') })
        .expect(200);
      const res = await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .set('If-Match', '"1"')
        .send({ username: newName })
        .expect(412);
      expect(res.body.message).toContain('version 2');
      expect(await available(newName)).toBe(true);
    });

    it('answers 400 without If-Match, with a malformed If-Match and with a bad body; 404 for an unknown user', async () => {
      const { body: user } = await register(freshName('bad')).expect(201);
      const newName = freshName('never');
      await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .send({ username: newName })
        .expect(400);
      await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .set('If-Match', 'yesterday')
        .send({ username: newName })
        .expect(400);
      await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .set('If-Match', '"1"')
        .send({ username: { $gt: '' } })
        .expect(400);
      await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .set('If-Match', '"1"')
        .send({ username: 'x' })
        .expect(400);
      await http
        .patch('/users/000000000000000/username')
        .set('Authorization', bearer(user))
        .set('If-Match', '"1"')
        .send({ username: newName })
        .expect(404);
      expect(await available(newName)).toBe(true);
      await http.get(`/users/${user.id}`).expect(200, viewOf(user));
    });
  });

  describe('DELETE /users/:id', () => {
    it('answers 204, frees the name, drops the user from the read model; then 404', async () => {
      const name = freshName('del');
      const { body: user } = await register(name).expect(201);
      // In the read model first, so that its leaving it below is the delete's doing.
      await byNameSettles(name, [viewOf(user)]);
      await http.delete(`/users/${user.id}`).set('Authorization', bearer(user)).expect(204);
      await http.get(`/users/${user.id}`).expect(404);
      expect(await available(name)).toBe(true);
      await byNameSettles(name, []);
      await http.delete(`/users/${user.id}`).set('Authorization', bearer(user)).expect(404);
      await register(name).expect(201);
    });

    it('honours an If-Match when one is sent (412 on a stale one, nothing deleted)', async () => {
      const name = freshName('dm');
      const { body: user } = await register(name).expect(201);
      await http.delete(`/users/${user.id}`).set('Authorization', bearer(user)).set('If-Match', '"7"').expect(412);
      await http.get(`/users/${user.id}`).expect(200);
      expect(await available(name)).toBe(false);
      await http.delete(`/users/${user.id}`).set('Authorization', bearer(user)).set('If-Match', '"1"').expect(204);
    });
  });

  describe('GET /usernames/:name and GET /users?username=', () => {
    it('reports availability case-insensitively with the folded name', async () => {
      const name = freshName('Av');
      await http.get(`/usernames/${name}`).expect(200, { username: name.toLowerCase(), available: true });
      await register(name).expect(201);
      await http
        .get(`/usernames/${name.toUpperCase()}`)
        .expect(200, { username: name.toLowerCase(), available: false });
    });

    it('answers 400 for an invalid name', async () => {
      await http.get('/usernames/ab').expect(400);
      await http.get(`/usernames/${'a'.repeat(40)}`).expect(400);
      await http.get('/users').expect(400);
      await http.get('/users').query({ username: 'no way' }).expect(400);
      await http.get('/users?username=abc&username=def').expect(400);
      await http.get('/users?username[$ne]=x').expect(400);
    });
  });
});
