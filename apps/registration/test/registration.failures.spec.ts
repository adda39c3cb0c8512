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

  it('a registration whose insert fails leaves the name free and stores no user', async () => {
    const name = freshName('fail');
    const insert = jest.spyOn(users, 'insert').mockRejectedValueOnce(new Error('injected: the store refused the write'));
    await http.post('/users').send({ username: name }).expect(500);
    expect(insert).toHaveBeenCalledTimes(1);
    expect(await available(name)).toBe(true);
    expect((await http.get('/users').query({ username: name }).expect(200)).body).toEqual([]);
    // And the name is usable at once.
    await http.post('/users').send({ username: name }).expect(201);
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

    const res = await http.patch(`/users/${user.id}/username`).set('Authorization', bearer(user)).set('If-Match', '"1"').send({ username: newName }).expect(412);
    expect(res.body.message).toMatch(/version/);
    expect(await available(oldName)).toBe(false);
    expect(await available(newName)).toBe(true);
    const stored = (await http.get(`/users/${user.id}`).expect(200)).body;
    expect(stored).toEqual({ id: user.id, username: oldName, version: 2 });
    // The old name is still the user's: a rename from the current version works.
    await http.patch(`/users/${user.id}/username`).set('Authorization', bearer(user)).set('If-Match', '"2"').send({ username: newName }).expect(200);
  });

  it('the lost race really is an OptimisticLockError from the repository', async () => {
    const { body: user } = await http.post('/users').send({ username: freshName('ol') }).expect(201);
    const a = (await users.findById(user.id))!;
    const b = (await users.findById(user.id))!;
    a.rename(freshName('ol'));
    await users.update(a);
    b.rename(freshName('ol'));
    await expect(users.update(b)).rejects.toBeInstanceOf(OptimisticLockError);
  });
});
