import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { getIdempotencyStoreToken, type IdempotencyStore } from '@ddd-kit/idempotency';
import request from 'supertest';
import { TransactionHost } from '@nestjs-cls/transactional';
import { UsersService } from '../src/users/users.service.js';
import {
  breaches,
  memoryOnly,
  postgresInProcess,
  redisAndPostgresInProcess,
  type Deployment,
} from './support/deployments.js';
import { mongoLabel } from '../../../test/support/servers.js';
import { bearer, createTestApp, freshName, sharedBackend } from './support/test-app.js';

/**
 * `Idempotency-Key` on the sample's commands (SPEC §4, "Repeated requests"): a repeat of a
 * request gets the first one's response again, with no second effect; for `POST /users` the
 * same user and a secret that works. The same key with another request is a 422; while the
 * first still runs, a 409; another caller's request with the same key never sees the first
 * caller's response. (A response lost on the way back is registration.lost-response.spec.ts.)
 */
const deployments: Deployment[] = [memoryOnly(), postgresInProcess(), redisAndPostgresInProcess()];

/** A fresh key, as a Structured Field string (the quotes are part of it). */
const newKey = () => `"${randomUUID()}"`;

interface Registered {
  id: string;
  username: string;
  version: number;
  secret: string;
}

describe.each(deployments)('Idempotency-Key on $label', (deployment) => {
  let app: INestApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    const running = await deployment.start({ instances: 1, proxied: false });
    app = running.app!;
    http = request(running.urls[0]);
  }, 60_000);

  afterEach(() => {
    jest.restoreAllMocks();
  });

  afterAll(() => deployment.close());

  const register = (username: string, key?: string) => {
    const req = http.post('/users').send({ username });
    return key === undefined ? req : req.set('Idempotency-Key', key);
  };
  const rename = (user: { id: string; secret: string }, username: string, version: number, key: string) =>
    http
      .patch(`/users/${user.id}/username`)
      .set('Authorization', bearer(user))
      .set('If-Match', String(version))
      .set('Idempotency-Key', key)
      .send({ username });
  const usersNamed = async (username: string) =>
    (await deployment.inspect()).users.filter((u) => u.username === username);

  it('a repeated POST /users gets the same 201: the same user, its headers, and a secret that works', async () => {
    const username = freshName('rep');
    const key = newKey();
    const first = await register(username, key).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const repeat = await register(username, key).expect(201);
    expect(repeat.body).toEqual(first.body);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    for (const header of ['location', 'etag', 'cache-control'])
      expect([header, repeat.headers[header]]).toEqual([header, first.headers[header]]);
    expect(repeat.headers['cache-control']).toBe('no-store');
    expect(await usersNamed(username)).toEqual([{ id: first.body.id, username }]);
    // The replayed secret is the user's: it renames the user.
    const user = repeat.body as Registered;
    await rename(user, freshName('rep'), 1, newKey()).expect(200);
    expect(breaches(await deployment.inspect())).toEqual([]);
  });

  it('a repeated PATCH and DELETE get their first 200 and 204, not a 412 and a 404', async () => {
    const user = (await register(freshName('rep')).expect(201)).body as Registered;
    const [renameKey, deleteKey] = [newKey(), newKey()];
    const newName = freshName('rep');
    const renamed = await rename(user, newName, 1, renameKey).expect(200);
    expect(renamed.body).toEqual({ id: user.id, username: newName, version: 2 });
    const again = await rename(user, newName, 1, renameKey).expect(200);
    expect(again.body).toEqual(renamed.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.etag).toBe(renamed.headers.etag);
    const remove = () =>
      http.delete(`/users/${user.id}`).set('Authorization', bearer(user)).set('Idempotency-Key', deleteKey);
    await remove().expect(204);
    const removedAgain = await remove().expect(204);
    expect(removedAgain.headers['idempotent-replayed']).toBe('true');
    await http.get(`/users/${user.id}`).expect(404);
    // Without a key, a repeat is a new request: the user is gone.
    await http.delete(`/users/${user.id}`).set('Authorization', bearer(user)).expect(404);
  });

  it('the same key with another request is a 422, and changes nothing', async () => {
    const [username, other] = [freshName('conf'), freshName('conf')];
    const key = newKey();
    const first = (await register(username, key).expect(201)).body as Registered;
    const refused = await register(other, key).expect(422);
    expect(refused.body.message).toMatch(/Idempotency-Key/);
    expect(await usersNamed(other)).toEqual([]);
    await http.get(`/usernames/${other}`).expect(200, { username: other, available: true });
    // The user's rename, repeated with its key but another name: 422, the first rename stands.
    const renameKey = newKey();
    const renamed = freshName('conf');
    await rename(first, renamed, 1, renameKey).expect(200);
    await rename(first, freshName('conf'), 1, renameKey).expect(422);
    await http.get(`/users/${first.id}`).expect(200, { id: first.id, username: renamed, version: 2 });
  });

  it('a key that is not a Structured Field string is a 400, and changes nothing', async () => {
    const username = freshName('bad');
    for (const key of [randomUUID(), '"unterminated', '"a", "b"', '"\u00e9"'])
      await register(username, key)
        .expect(400)
        .then((r) => expect(r.body.message).toMatch(/Idempotency-Key/));
    expect(await usersNamed(username)).toEqual([]);
  });

  it('while the first request still runs, a repeat is a 409; once it is done, a repeat gets its 201', async () => {
    const users = app.get(UsersService);
    const register_ = users.register.bind(users);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    jest.spyOn(users, 'register').mockImplementationOnce(async (...args) => {
      entered();
      await released;
      return register_(...args);
    });
    const username = freshName('busy');
    const key = newKey();
    const first = register(username, key).then((r) => r);
    await inside;
    const busy = await register(username, key).expect(409);
    expect(busy.body.message).toMatch(/still being processed/);
    release();
    const done = await first;
    expect(done.status).toBe(201);
    const repeat = await register(username, key).expect(201);
    expect(repeat.body).toEqual(done.body);
    expect(await usersNamed(username)).toHaveLength(1);
  });

  it("a key is scoped to its caller: another user's request with the same key runs as its own", async () => {
    const [alice, bob] = [
      (await register(freshName('alice')).expect(201)).body as Registered,
      (await register(freshName('bob')).expect(201)).body as Registered,
    ];
    const key = newKey();
    const aliceName = freshName('alice');
    await rename(alice, aliceName, 1, key).expect(200);
    // Bob repeats Alice's very request, with her key and his own secret: his, not hers — a 403.
    const asBob = await rename({ id: alice.id, secret: bob.secret }, aliceName, 1, key).expect(403);
    expect(asBob.headers['idempotent-replayed']).toBeUndefined();
    // Bob renames himself with that key: his own rename runs.
    const bobName = freshName('bob');
    const own = await rename(bob, bobName, 1, key).expect(200);
    expect(own.body).toEqual({ id: bob.id, username: bobName, version: 2 });
    expect(own.headers['idempotent-replayed']).toBeUndefined();
    await http.get(`/users/${alice.id}`).expect(200, { id: alice.id, username: aliceName, version: 2 });
  });

  it('a request that failed keeps nothing: a 409 for a taken name, repeated once the name is free, registers', async () => {
    const holder = (await register(freshName('held')).expect(201)).body as Registered;
    const key = newKey();
    await register(holder.username, key).expect(409);
    await http.delete(`/users/${holder.id}`).set('Authorization', bearer(holder)).expect(204);
    const registered = await register(holder.username, key).expect(201);
    expect(registered.headers['idempotent-replayed']).toBeUndefined();
    expect(await usersNamed(holder.username)).toEqual([{ id: registered.body.id, username: holder.username }]);
  });

  it('the secret a registration returns is never handed to the store in the clear', async () => {
    const store = app.get<IdempotencyStore>(getIdempotencyStoreToken());
    const kept: unknown[] = [];
    const run = store.run.bind(store);
    jest.spyOn(store, 'run').mockImplementation((req, work) =>
      run(req, async () => {
        const result = await work();
        kept.push(result);
        return result;
      }),
    );
    const user = (await register(freshName('seal'), newKey()).expect(201)).body as Registered;
    expect(kept).toHaveLength(1);
    const stored = JSON.stringify(kept[0]);
    expect(stored).toContain(user.id);
    expect(stored).not.toContain(user.secret);
  });

  if (deployment.label !== 'memory') {
    it('on PostgreSQL the record is in the request transaction: a transaction that fails at its end keeps neither user nor record', async () => {
      const txHost = app.get(TransactionHost);
      const withTransaction = txHost.withTransaction.bind(txHost) as (fn: () => Promise<unknown>) => Promise<unknown>;
      // The request's own (outermost) transaction, which the idempotency store opens, runs to its
      // end, then fails instead of committing.
      jest.spyOn(txHost, 'withTransaction').mockImplementationOnce(((fn: () => Promise<unknown>) =>
        withTransaction(async () => {
          await fn();
          throw new Error('the commit was lost');
        })) as typeof txHost.withTransaction);
      const username = freshName('tx');
      const key = newKey();
      await register(username, key).expect(503);
      expect(await usersNamed(username)).toEqual([]);
      // A reservation on Redis is beside the transaction: reconciliation releases it (on PostgreSQL alone, nothing to do).
      await deployment.reconcile();
      // Recorded outside the transaction, the repeat would replay a 201 for a user that does not exist.
      const repeat = await register(username, key).expect(201);
      expect(repeat.headers['idempotent-replayed']).toBeUndefined();
      expect(await usersNamed(username)).toEqual([{ id: repeat.body.id, username }]);
      await http.get(`/users/${repeat.body.id}`).expect(200);
    });
  }
});

// Beside MongoDB the records live on Redis, shared by the instances: a repeat may reach another one.
describe(`Idempotency-Key across two instances on Redis + ${mongoLabel()}`, () => {
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    // One deployment: the same stores and prefix, and the same IDEMPOTENCY_SECRET on both.
    const config = { ...sharedBackend.config(), idempotencySecret: randomBytes(32).toString('base64') };
    for (let i = 0; i < 2; i++) apps.push(await createTestApp(config));
  }, 60_000);

  afterEach(() => {
    jest.restoreAllMocks();
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('a registration repeated on the other instance gets the same user and a secret that works there', async () => {
    const [a, b] = apps.map((app) => request(app.getHttpServer()));
    const username = freshName('two');
    const key = newKey();
    const first = await a.post('/users').set('Idempotency-Key', key).send({ username }).expect(201);
    const repeat = await b.post('/users').set('Idempotency-Key', key).send({ username }).expect(201);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.body).toEqual(first.body);
    const renamed = freshName('two');
    await b
      .patch(`/users/${repeat.body.id}/username`)
      .set('Authorization', bearer(repeat.body))
      .set('If-Match', '1')
      .send({ username: renamed })
      .expect(200, { id: first.body.id, username: renamed, version: 2 });
    // While a rename runs on one instance, its repeat on the other is a 409.
    const users = apps[0].get(UsersService);
    const rename_ = users.rename.bind(users);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    jest.spyOn(users, 'rename').mockImplementationOnce(async (...args) => {
      entered();
      await released;
      return rename_(...args);
    });
    const renameKey = newKey();
    const third = freshName('two');
    const send = (http: ReturnType<typeof request>) =>
      http
        .patch(`/users/${first.body.id}/username`)
        .set('Authorization', bearer(first.body))
        .set('If-Match', '2')
        .set('Idempotency-Key', renameKey)
        .send({ username: third });
    const running = send(a).then((r) => r);
    await inside;
    await send(b).expect(409);
    release();
    expect((await running).status).toBe(200);
    await send(b).expect(200);
  });
});
