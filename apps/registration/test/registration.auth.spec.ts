// Authentication of the sample (SPEC §4): POST /users returns a per-user secret once; renaming
// and deleting a user take `Authorization: Bearer <secret>` of that user — 401 without (or
// malformed), 403 with another user's — and the stored hash appears in no response and no read
// model. On every repository backend the app supports.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { getAggregateName, getRepositoryToken, type IRepository } from '@ddd-kit/repository';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { MONGO_CONNECTION } from '../src/backends/mongo.js';
import { UserReadModel } from '../src/read-model/user-read-model.js';
import { User } from '../src/users/user.aggregate.js';
import { waitFor } from '../../../test/support/wait.js';
import { backends, bearer, createTestApp, freshName } from './support/test-app.js';
import type { Connection } from 'mongoose';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Registered {
  id: string;
  username: string;
  version: number;
  secret: string;
}

describe.each(backends)('registration authentication on $label', (backend) => {
  let app: INestApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await createTestApp(backend.config());
    http = request(app.getHttpServer());
  });

  afterAll(async () => {
    await app?.close();
  });

  const register = async (prefix: string): Promise<Registered> =>
    (
      await http
        .post('/users')
        .send({ username: freshName(prefix) })
        .expect(201)
    ).body;
  const available = async (name: string) => (await http.get(`/usernames/${name}`).expect(200)).body.available;
  const rename = (user: { id: string }, username: string, authorization?: string) => {
    const req = http.patch(`/users/${user.id}/username`).set('If-Match', '"1"');
    return (authorization === undefined ? req : req.set('Authorization', authorization)).send({ username });
  };
  const remove = (user: { id: string }, authorization?: string) => {
    const req = http.delete(`/users/${user.id}`);
    return authorization === undefined ? req : req.set('Authorization', authorization);
  };
  /** The user is exactly as registered: same name and version, its name still held. */
  const unchanged = async (user: Registered) => {
    expect((await http.get(`/users/${user.id}`).expect(200)).body).toEqual({
      id: user.id,
      username: user.username,
      version: 1,
    });
    expect(await available(user.username)).toBe(false);
  };

  it('returns a secret of 43 base64url characters (256 bits) once; no two users get the same one', async () => {
    const [a, b] = [await register('sa'), await register('sb')];
    for (const user of [a, b]) expect(user.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.secret).not.toBe(b.secret);
    expect((await http.get(`/users/${a.id}`).expect(200)).body).not.toHaveProperty('secret');
  });

  it("renames and deletes with the user's own secret (the scheme in any case)", async () => {
    const user = await register('own');
    const newName = freshName('own');
    await rename(user, newName, bearer(user)).expect(200, { id: user.id, username: newName, version: 2 });
    await http.delete(`/users/${user.id}`).set('Authorization', `bearer ${user.secret}`).expect(204);
    expect(await available(newName)).toBe(true);
  });

  it('answers 401 with a Bearer challenge without Authorization, and changes nothing', async () => {
    const user = await register('none');
    const newName = freshName('none');
    const res = await rename(user, newName).expect(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="registration"');
    expect(res.body.message).toMatch(/Authorization: Bearer/);
    await remove(user).expect(401);
    await unchanged(user);
    expect(await available(newName)).toBe(true);
  });

  it('answers 401 before reading the body or the user: no token on an unknown user or a bad body is still 401', async () => {
    await http.patch('/users/000000000000000/username').set('If-Match', '"1"').send({ username: 'x' }).expect(401);
    await http.delete('/users/000000000000000').expect(401);
  });

  it.each([
    ['another scheme', (s: string) => `Basic ${Buffer.from(`user:${s}`).toString('base64')}`],
    ['the scheme alone', () => 'Bearer'],
    ['the secret without the scheme', (s: string) => s],
    ['a truncated secret', (s: string) => `Bearer ${s.slice(0, 42)}`],
    ['the secret with a character added', (s: string) => `Bearer ${s}A`],
    ['the hash the app stores instead of the secret', (s: string) => `Bearer ${sha256(s)}`],
  ])('answers 401 (invalid_request) for a malformed Authorization: %s', async (_label, header) => {
    const user = await register('mal');
    const res = await rename(user, freshName('mal'), header(user.secret)).expect(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="registration", error="invalid_request"');
    await remove(user, header(user.secret)).expect(401);
    await unchanged(user);
  });

  it("answers 403 with another user's secret, and changes neither user", async () => {
    const [victim, attacker] = [await register('vic'), await register('att')];
    const newName = freshName('vic');
    const res = await rename(victim, newName, bearer(attacker)).expect(403);
    expect(res.body.message).toContain(victim.id);
    await remove(victim, bearer(attacker)).expect(403);
    await unchanged(victim);
    await unchanged(attacker);
    expect(await available(newName)).toBe(true);
  });

  it('answers 403 for a well-formed secret that belongs to nobody', async () => {
    const user = await register('nobody');
    const forged = `Bearer ${Buffer.alloc(32, 7).toString('base64url')}`;
    await rename(user, freshName('nobody'), forged).expect(403);
    await remove(user, forged).expect(403);
    await unchanged(user);
  });

  it("a deleted user's secret opens nothing: 404 on its own (gone) user, 403 on anyone else", async () => {
    const [gone, other] = [await register('gone'), await register('other')];
    await remove(gone, bearer(gone)).expect(204);
    await rename(gone, freshName('gone'), bearer(gone)).expect(404);
    await remove(gone, bearer(gone)).expect(404);
    await rename(other, freshName('other'), bearer(gone)).expect(403);
    await remove(other, bearer(gone)).expect(403);
    await unchanged(other);
  });

  it('keeps only the SHA-256 of the secret on the user; no response and no read model holds it', async () => {
    const user = await register('hash');
    const stored = await app.get<IRepository<string, User>>(getRepositoryToken(User)).findById(user.id);
    expect(stored?.secretHash).toBe(sha256(user.secret));
    expect(JSON.stringify(stored)).not.toContain(user.secret);
    // What every read model is fed (data-sync events carry the snapshot) leaves the hash out.
    expect(stored!.toSnapshot()).toEqual({ id: user.id, username: user.username });

    const bodies = [
      (await http.get(`/users/${user.id}`).expect(200)).body,
      // The read model's answer once the registration's event reached it.
      await waitFor('the read model to show the registration', async () => {
        const found = (await http.get('/users').query({ username: user.username }).expect(200)).body;
        expect(found).toEqual([{ id: user.id, username: user.username, version: 1 }]);
        return found;
      }),
      (await rename(user, freshName('hash'), bearer(user)).expect(200)).body,
    ];
    for (const body of bodies) {
      expect(JSON.stringify(body)).not.toMatch(/secret/i);
      expect(JSON.stringify(body)).not.toContain(sha256(user.secret));
    }
    await waitFor('the read model to show the rename', async () => {
      expect(await app.get(UserReadModel).findByUsername(bodies[2].username)).toEqual([
        { id: user.id, username: bodies[2].username, version: 2 },
      ]);
      return true;
    });

    if (backend.label !== 'memory') {
      const mongo = app.get<Connection>(MONGO_CONNECTION);
      // The user document carries the hash (a field beside username and version); the read model's does not.
      const document = await mongo.collection(getAggregateName(User)).findOne({ _id: user.id as never });
      // Beside the fields of the outbox (the events not yet delivered: no secret in them either, see the snapshot above).
      const fields = Object.fromEntries(
        Object.entries(document ?? {}).filter(([field]) => !field.startsWith('_outbox')),
      );
      expect(fields).toEqual({
        _id: user.id,
        username: bodies[2].username,
        secretHash: sha256(user.secret),
        version: 2,
      });
      expect(JSON.stringify(document)).not.toContain(user.secret);
      const view = await mongo.collection('user_views').findOne({ _id: user.id as never });
      expect(view).toEqual({ _id: user.id, username: bodies[2].username, version: 2 });
    } else {
      // In memory no MongoDB connection is opened at all.
      expect(() => app.get(MONGO_CONNECTION)).toThrow();
    }
  });
});
