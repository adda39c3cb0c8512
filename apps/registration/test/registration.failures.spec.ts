import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { getRepositoryToken, OptimisticLockError, type IRepository } from '@ddd-kit/repository';
import request from 'supertest';
import { User } from '../src/users/user.aggregate.js';
import { backends, bearer, createTestApp, freshName } from './support/test-app.js';

// Failures injected into the real app's repository: nothing may be left half-written.
describe.each(backends)('registration failure paths on $label', (backend) => {
  let app: INestApplication;
  let http: ReturnType<typeof request>;
  let users: IRepository<string, User>;

  beforeAll(async () => {
    app = await createTestApp(backend.config());
    http = request(app.getHttpServer());
    users = app.get(getRepositoryToken(User));
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  afterAll(async () => {
    await app?.close();
  });

  const available = async (name: string) => (await http.get(`/usernames/${name}`).expect(200)).body.available;

  /** The repository's own store step, where a failure of the store itself shows up. */
  const storeStep = (step: 'doInsert' | 'doUpdate' | 'doRemove') =>
    jest.spyOn(users as unknown as Record<typeof step, (...args: unknown[]) => Promise<void>>, step);

  it('a registration whose insert never reached the store: 503, the name is free again and no user is stored', async () => {
    const name = freshName('fail');
    storeStep('doInsert').mockRejectedValueOnce(new Error('injected: the connection dropped before the write'));
    await http.post('/users').send({ username: name }).expect(503);
    expect(await available(name)).toBe(true);
    expect((await http.get('/users').query({ username: name }).expect(200)).body).toEqual([]);
    // And the name is usable at once.
    await http.post('/users').send({ username: name }).expect(201);
  });

  it('a registration whose insert happened but whose reply was lost: 503, and the name stays held by the stored user', async () => {
    const name = freshName('lost');
    const insert = storeStep('doInsert');
    const real =
      insert.getMockImplementation() ?? (users as unknown as { doInsert: (...a: unknown[]) => Promise<void> }).doInsert;
    insert.mockImplementationOnce(async function (this: unknown, ...args: unknown[]) {
      await (real as (...a: unknown[]) => Promise<void>).apply(users, args);
      throw new Error('injected: the reply to the insert was lost');
    });
    await http.post('/users').send({ username: name }).expect(503);
    insert.mockRestore();
    // The user exists (it was written): its name is not handed out a second time.
    await http.post('/users').send({ username: name }).expect(409);
    expect(await available(name)).toBe(false);
  });

  it("a rename whose update never reached the store: 503, the old name stays the user's, the new one is free", async () => {
    const [oldName, newName] = [freshName('keep'), freshName('want')];
    const { body: user } = await http.post('/users').send({ username: oldName }).expect(201);
    // While the rename is in flight, someone else tries to register the old name: it must still be held.
    let meanwhile: number | undefined;
    storeStep('doUpdate').mockImplementationOnce(async () => {
      // The new name is reserved by now; the old one must not have been let go.
      meanwhile = (await http.post('/users').send({ username: oldName })).status;
      throw new Error('injected: the connection dropped before the write');
    });
    await http
      .patch(`/users/${user.id}/username`)
      .set('Authorization', bearer(user))
      .set('If-Match', '"1"')
      .send({ username: newName })
      .expect(503);
    expect(meanwhile).toBe(409);
    expect(await available(oldName)).toBe(false);
    await http.post('/users').send({ username: oldName }).expect(409);
    expect((await http.get(`/users/${user.id}`).expect(200)).body.username).toBe(oldName);
  });

  it('a rename racing a delete: 404 for the user that is gone, and neither name stays reserved', async () => {
    const [oldName, newName] = [freshName('gone'), freshName('gone')];
    const { body: user } = await http.post('/users').send({ username: oldName }).expect(201);
    const realUpdate = users.update.bind(users);
    jest.spyOn(users, 'update').mockImplementationOnce(async (renamed) => {
      // The delete lands between this request's load and its write.
      await users.remove((await users.findById(renamed.id))!);
      return realUpdate(renamed);
    });
    await http
      .patch(`/users/${user.id}/username`)
      .set('Authorization', bearer(user))
      .set('If-Match', '"1"')
      .send({ username: newName })
      .expect(404);
    expect(await available(oldName)).toBe(true);
    expect(await available(newName)).toBe(true);
  });

  it('a rename whose update loses the optimistic race answers 412, keeps the old name held and frees the new one', async () => {
    const [oldName, newName] = [freshName('race'), freshName('race')];
    const { body: user } = await http.post('/users').send({ username: oldName }).expect(201);

    const realUpdate = users.update.bind(users);
    jest.spyOn(users, 'update').mockImplementationOnce(async (loser) => {
      // Another writer updates the same user between this request's load and its write.
      const winner = (await users.findById(loser.id))!;
      await realUpdate(winner);
      return realUpdate(loser);
    });

    const res = await http
      .patch(`/users/${user.id}/username`)
      .set('Authorization', bearer(user))
      .set('If-Match', '"1"')
      .send({ username: newName })
      .expect(412);
    expect(res.body.message).toMatch(/version/);
    expect(await available(oldName)).toBe(false);
    expect(await available(newName)).toBe(true);
    const stored = (await http.get(`/users/${user.id}`).expect(200)).body;
    expect(stored).toEqual({ id: user.id, username: oldName, version: 2 });
    // The old name is still the user's: a rename from the current version works.
    await http
      .patch(`/users/${user.id}/username`)
      .set('Authorization', bearer(user))
      .set('If-Match', '"2"')
      .send({ username: newName })
      .expect(200);
  });

  it('the lost race really is an OptimisticLockError from the repository', async () => {
    const { body: user } = await http
      .post('/users')
      .send({ username: freshName('ol') })
      .expect(201);
    const a = (await users.findById(user.id))!;
    const b = (await users.findById(user.id))!;
    a.rename(freshName('ol'));
    await users.update(a);
    b.rename(freshName('ol'));
    await expect(users.update(b)).rejects.toBeInstanceOf(OptimisticLockError);
  });
});
