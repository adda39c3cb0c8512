import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { getRepositoryToken, type IRepository } from '@ddd-kit/repository';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import request from 'supertest';
import { assertBuilt } from '../../../test/support/built.js';
import { mongoLabel } from '../../../test/support/servers.js';
import { UserReadModel } from '../src/read-model/user-read-model.js';
import { RegistrationReconciler } from '../src/reconciliation/registration-reconciler.js';
import { User } from '../src/users/user.aggregate.js';
import { UsernamePrepareKey } from '../src/users/username.prepare-key.js';
import { waitFor } from '../../../test/support/wait.js';
import {
  backends,
  bearer,
  createTestApp,
  freshName,
  sharedBackend,
  sharedBackendEnv,
  viewOf,
} from './support/test-app.js';

describe.each(backends)('registration reconciliation on $label', (backend) => {
  let app: INestApplication;
  let http: ReturnType<typeof request>;
  let usernames: UsernamePrepareKey;
  let users: IRepository<string, User>;
  let readModel: UserReadModel;

  beforeAll(async () => {
    // Grace 0: every reservation without its user is released, however young.
    app = await createTestApp({ ...backend.config(), reconcileGraceMs: 0 });
    http = request(app.getHttpServer());
    usernames = app.get(UsernamePrepareKey);
    users = app.get(getRepositoryToken(User));
    readModel = app.get(UserReadModel);
  });

  afterAll(async () => {
    await app?.close();
  });

  const available = async (name: string) => (await http.get(`/usernames/${name}`).expect(200)).body.available;

  it('releases the name of a user deleted by a request whose release failed, and nothing else', async () => {
    const [lost, kept] = [freshName('lost'), freshName('kept')];
    const { body: victim } = await http.post('/users').send({ username: lost }).expect(201);
    const { body: survivor } = await http.post('/users').send({ username: kept }).expect(201);
    // The user is deleted; releasing its name then fails (the store went away for a moment).
    jest.spyOn(usernames, 'rollback').mockRejectedValueOnce(new Error('injected: the release failed'));
    await http.delete(`/users/${victim.id}`).set('Authorization', bearer(victim)).expect(204);
    jest.restoreAllMocks();
    await http.get(`/users/${victim.id}`).expect(404);
    expect(await available(lost)).toBe(false);

    const report = await app.get(RegistrationReconciler).run();
    expect(report.usernames.released).toBeGreaterThanOrEqual(1);
    expect(report.usernames.failed).toBe(0);
    expect(await available(lost)).toBe(true);
    expect(await available(kept)).toBe(false);
    await http.get(`/users/${survivor.id}`).expect(200, viewOf(survivor));
  });

  it('restores the reservation of a user whose name has none, so the name is not handed out twice', async () => {
    const name = freshName('lostres');
    const { body: user } = await http.post('/users').send({ username: name }).expect(201);
    await usernames.rollback(name); // the reservation is lost (a store restart without persistence)
    expect(await available(name)).toBe(true);
    const report = await app.get(RegistrationReconciler).run();
    expect(report.usernames.restored).toBeGreaterThanOrEqual(1);
    expect(await usernames.get(name)).toMatchObject({ aggregate: 'user', id: user.id });
    await http.post('/users').send({ username: name }).expect(409);
  });

  it('spares a reservation younger than the grace period (a registration between its two steps)', async () => {
    const name = freshName('flight');
    await usernames.prepare(name, { aggregate: 'user', id: 'notinsertedyet0', at: Date.now() });
    const patient = new RegistrationReconciler(users, readModel, 60_000);
    const report = await patient.run();
    expect(report.usernames.released).toBe(0);
    expect(await available(name)).toBe(false);
    await app.get(RegistrationReconciler).run();
    expect(await available(name)).toBe(true);
  });

  it('repairs the read model: a lost UPSERT (stale entry) is resynced, a lost PURGE (orphan) is purged', async () => {
    const { body: user } = await http
      .post('/users')
      .send({ username: freshName('rm') })
      .expect(201);
    const renamed = (
      await http
        .patch(`/users/${user.id}/username`)
        .set('Authorization', bearer(user))
        .set('If-Match', '"1"')
        .send({ username: freshName('rm') })
        .expect(200)
    ).body;
    // Both events delivered first (on a shared repository the relay delivers them after the
    // requests answered), so none lands on what is injected below.
    await waitFor('the read model to show the rename', async () => {
      expect((await http.get('/users').query({ username: renamed.username }).expect(200)).body).toEqual([renamed]);
      return true;
    });
    // Inject what lost events leave behind: the replica still holds version 1 of the user, and a user that no longer exists.
    await readModel.upsert(user.id, 1, { id: user.id, username: user.username });
    const ghost = freshName('ghost');
    await readModel.upsert('0000ghost000000', 3, { id: '0000ghost000000', username: ghost });
    expect((await http.get('/users').query({ username: ghost }).expect(200)).body).toHaveLength(1);

    const report = await app.get(RegistrationReconciler).run();
    expect(report.readModel.stale).toBeGreaterThanOrEqual(1);
    expect(report.readModel.resynced).toBeGreaterThanOrEqual(1);
    expect(report.readModel.purged).toBeGreaterThanOrEqual(1);
    expect(report.readModel.failed).toBe(0);
    expect((await http.get('/users').query({ username: ghost }).expect(200)).body).toEqual([]);
    expect((await http.get('/users').query({ username: renamed.username }).expect(200)).body).toEqual([renamed]);
    expect((await http.get('/users').query({ username: user.username }).expect(200)).body).toEqual([]);
  });
});

describe(`npm run reconcile (the nightly command) on Redis + ${mongoLabel()}`, () => {
  const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'reconcile.js');

  it('runs both reconcilers once against the configured backends and prints the report', async () => {
    assertBuilt('apps/registration'); // dist/reconcile.js and the libraries it imports
    const config = sharedBackend.config();
    const app = await createTestApp(config);
    const name = freshName('night');
    try {
      await app.get(UsernamePrepareKey).prepare(name, { aggregate: 'user', id: '000000000000000', at: 0 });
    } finally {
      await app.close();
    }
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: {
        ...process.env,
        ...sharedBackendEnv(config, '7'),
      },
    });
    const report = JSON.parse(stdout);
    expect(report.usernames.released).toBeGreaterThanOrEqual(1);
    expect(report.readModel).toEqual(expect.objectContaining({ scanned: expect.any(Number), failed: 0 }));
    const check = await createTestApp(config);
    try {
      expect(await check.get(UsernamePrepareKey).get(name)).toBeUndefined();
    } finally {
      await check.close();
    }
  });

  it('refuses to run against a repository that is not shared (it would judge every reservation against an empty store), touching nothing', async () => {
    const config = sharedBackend.config();
    const app = await createTestApp(config);
    const name = freshName('keep');
    try {
      await http(app).post('/users').send({ username: name }).expect(201);
    } finally {
      await app.close();
    }
    // Redis reservations, and the default in-memory repository.
    const env = {
      ...process.env,
      ...sharedBackendEnv(config, '7'),
      REPOSITORY_BACKEND: 'memory',
      RECONCILE_GRACE_MS: '0',
    };
    const run = promisify(execFile)(process.execPath, [script], { env });
    await expect(run).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/REPOSITORY_BACKEND/) });
    const check = await createTestApp(config);
    try {
      expect(await check.get(UsernamePrepareKey).get(name)).toMatchObject({ aggregate: 'user' });
    } finally {
      await check.close();
    }
  });
});

function http(app: INestApplication) {
  return request(app.getHttpServer());
}
