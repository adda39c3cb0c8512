import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { mongoUri, postgresSchema, redisUrl, uniqueName } from '../../../test/support/servers.js';
import type { AppConfig, PrepareBackend, RepositoryBackend } from '../src/config/app-config.js';
import { waitFor } from '../../../test/support/wait.js';
import { bearer, createTestApp, freshName } from './support/test-app.js';

// Every backend combination the configuration allows (PREPARE_BACKEND × REPOSITORY_BACKEND ×
// MACHINE_ID): the app starts on it, opens only the stores it names, and serves a user's whole
// life. The other suites go deep on a few deployments; this one is the matrix.
const prepareBackends: PrepareBackend[] = ['memory', 'redis', 'mongo', 'postgres'];
const repositoryBackends: RepositoryBackend[] = ['memory', 'mongo', 'postgres'];
const machineIds: AppConfig['machineId'][] = [7, 'redis', 'postgres'];
const matrix = prepareBackends.flatMap((prepare) =>
  repositoryBackends.flatMap((repository) => machineIds.map((machineId) => [prepare, repository, machineId] as const)),
);

describe('the sample on every backend combination', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  const name = uniqueName('backends');

  beforeAll(async () => {
    schema = await postgresSchema('backends');
  });
  afterAll(() => schema?.drop());

  it.each(matrix)('PREPARE_BACKEND=%s REPOSITORY_BACKEND=%s MACHINE_ID=%s', async (prepare, repository, machineId) => {
    const uses = (store: string) => prepare === store || repository === store || machineId === store;
    // Only the URLs of the stores chosen: a composition that reached for another store would fail to start.
    const app = await createTestApp({
      prepareBackend: prepare,
      repositoryBackend: repository,
      machineId,
      redisUrl: uses('redis') ? redisUrl() : undefined,
      mongodbUri: uses('mongo') ? `${mongoUri().replace(/\/+$/, '')}/${name}` : undefined,
      databaseUrl: uses('postgres') ? schema.url : undefined,
      prepareKeyPrefix: `${name}:prepare`,
      port: 0,
    });
    try {
      const http = request(app.getHttpServer());
      const username = freshName('m');
      const user = (await http.post('/users').send({ username }).expect(201)).body;
      await http.get(`/usernames/${username}`).expect(200, { username, available: false });
      const view = { id: user.id, username, version: 1 };
      await waitFor('the read model to show the user', async () => {
        expect((await http.get('/users').query({ username }).expect(200)).body).toEqual([view]);
        return true;
      });
      await http.get('/health/ready').expect(200);
      await http.delete(`/users/${user.id}`).set('Authorization', bearer(user)).expect(204);
      await http.get(`/usernames/${username}`).expect(200, { username, available: true });
    } finally {
      await app.close();
    }
  });
});
