import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import request from 'supertest';
import { postgresSchema } from '../../../test/support/servers.js';
import { POSTGRES_POOL } from '../src/backends/postgres.js';
import { createTestApp, freshName } from './support/test-app.js';

const WAIT_MS = 300;
const NO_CONNECTION = `no database connection became free within ${WAIT_MS} ms (all 2 in use); retry later`;

/**
 * Waiting for a PostgreSQL connection is bounded (POSTGRES_CONNECTION_WAIT_MS): with every
 * connection of the pool held elsewhere, a request is a 503 that says so, not a hang; once
 * connections are free again, requests are served as before.
 */
describe('a request that finds every PostgreSQL connection busy', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let app: INestApplication;
  let held: PoolClient[] = [];

  beforeAll(async () => {
    schema = await postgresSchema('pool_wait');
    app = await createTestApp({
      prepareBackend: 'postgres',
      repositoryBackend: 'postgres',
      machineId: 'postgres',
      databaseUrl: schema.url,
      postgresPoolMax: 2,
      postgresConnectionWaitMs: WAIT_MS,
      port: 0,
    });
  });
  afterAll(async () => {
    for (const client of held) client.release();
    await app?.close();
    await schema?.drop();
  });

  it('is a 503 with a message naming the wait, on every route that needs one; served again once one is free', async () => {
    const http = request(app.getHttpServer());
    const taken = freshName('pw');
    await http.post('/users').send({ username: taken }).expect(201);

    // Every connection of the app's pool, held in a transaction (as by requests that take long).
    const pool = app.get<Pool>(POSTGRES_POOL);
    held = await Promise.all([pool.connect(), pool.connect()]);
    for (const client of held) await client.query('BEGIN');

    // supertest's timeout: a request left waiting for ever fails here instead of answering.
    const busy = { statusCode: 503, error: 'Service Unavailable', message: NO_CONNECTION };
    const post = await http
      .post('/users')
      .send({ username: freshName('pw') })
      .timeout(15_000);
    expect({ status: post.status, body: post.body }).toEqual({ status: 503, body: busy });
    const name = await http.get(`/usernames/${freshName('pw')}`).timeout(15_000);
    expect({ status: name.status, body: name.body }).toEqual({ status: 503, body: busy });
    const byName = await http.get('/users').query({ username: taken }).timeout(15_000);
    expect({ status: byName.status, body: byName.body }).toEqual({ status: 503, body: busy });

    for (const client of held.splice(0)) {
      await client.query('ROLLBACK');
      client.release();
    }
    await http
      .post('/users')
      .send({ username: freshName('pw') })
      .expect(201);
    await http.get(`/usernames/${taken}`).expect(200, { username: taken, available: false });
  });
});
