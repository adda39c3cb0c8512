// Liveness and readiness of the sample (SPEC §4: /health, /health/live, /health/ready; readiness
// in @nestjs/terminus JSON with each store and the machine-ID lease, 503 when not ready).
//  - The built app as an operator runs it, its Redis reached through the fault proxy: ready
//    while every store answers; Redis black-holed under the running app turns readiness red
//    (long before the machine-ID lease could run out) while liveness stays green; healed, it is
//    ready again.
//  - The app in-process on a machine-ID lease the test controls: a lost machine ID that cannot
//    be replaced makes readiness fail; once an ID is free again, the app is ready again.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { MachineIdHolder, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { Redis } from 'ioredis';
import request from 'supertest';
import { proxyUrl, type FaultProxy } from '../../../test/support/fault-proxy/index.js';
import { freePort } from '../../../test/support/server-provider.js';
import { waitFor } from '../../../test/support/wait.js';
import { postgresSchema, redisUrl, uniqueName } from '../../../test/support/servers.js';
import pg from 'pg';
import { AppProcess } from './support/app-process.js';
import { createTestApp, freshName, memoryBackend, sharedBackend, sharedBackendEnv } from './support/test-app.js';

interface HealthBody {
  status: string;
  info?: Record<string, Record<string, unknown>>;
  error?: Record<string, Record<string, unknown>>;
  details: Record<string, Record<string, unknown> & { status: string }>;
}

describe('health of the built app on Redis (through the fault proxy) and the MongoDB wire protocol', () => {
  let proxy: FaultProxy;
  let app: AppProcess;
  let url: string;

  const get = async (path: string): Promise<{ status: number; body: HealthBody }> => {
    const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, body: (await response.json()) as HealthBody };
  };

  beforeAll(async () => {
    const through = await proxyUrl('redis', redisUrl());
    proxy = through.proxy;
    const config = { ...sharedBackend.config(), redisUrl: through.url };
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // No PostgreSQL: this deployment's stores are Redis and MongoDB only.
    app = new AppProcess({ PORT: String(port), ...sharedBackendEnv(config), DATABASE_URL: '' });
    await app.waitForHealth(url);
  }, 90_000);

  afterAll(async () => {
    proxy?.heal({ reset: true });
    await app?.stop();
    await proxy?.close();
  });

  it('GET /health/ready: 200 in terminus JSON, each store and the lease up', async () => {
    const { status, body } = await get('/health/ready');
    expect({ status, overall: body.status, error: body.error }).toEqual({ status: 200, overall: 'ok', error: {} });
    expect(body.details).toEqual({
      'prepare-key': { status: 'up', backend: 'RedisPrepareKeyFactory', responseTime: expect.any(Number) },
      repository: { status: 'up', stores: ['mongodb'], responseTime: expect.any(Number) },
      'machine-id': {
        status: 'up',
        held: true,
        lost: false,
        machineId: expect.any(Number),
        namespace: 'registration',
        instanceId: expect.any(String),
        remainingMs: expect.any(Number),
      },
      // RepositoryModule's relay over the users' documents.
      outbox: { status: 'up', pending: 0, oldestPendingAgeMs: null, deadLetters: 0, oldestDeadLetterAgeMs: null },
    });
    expect(body.info).toEqual(body.details);
  });

  it('GET /health/live and GET /health: 200 in terminus JSON, no store asked', async () => {
    for (const path of ['/health/live', '/health']) {
      expect(await get(path)).toEqual({ status: 200, body: { status: 'ok', info: {}, error: {}, details: {} } });
    }
  });

  it('Redis black-holed under the running app: readiness turns 503 (the lease still held), liveness stays 200; healed: ready again', async () => {
    proxy.blackhole();
    try {
      const down = await waitFor('readiness turning red', async () => {
        const answer = await get('/health/ready');
        expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 503 });
        return answer;
      });
      expect(down.body.status).toBe('error');
      expect(down.body.error?.['prepare-key']).toEqual({
        status: 'down',
        message: 'timeout of 1000ms exceeded',
        responseTime: expect.any(Number),
      });
      // Red on the store's first missed answer, not once the lease (safeGuardMs, 60 s here) ran out.
      expect(down.body.details['machine-id']).toMatchObject({ status: 'up', held: true });
      expect(await get('/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });
    } finally {
      proxy.heal({ reset: true });
    }
    const up = await waitFor('readiness turning green again', async () => {
      const answer = await get('/health/ready');
      expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 200 });
      return answer;
    });
    expect(up.body.details['prepare-key']).toMatchObject({ status: 'up' });
    expect(up.body.details['machine-id']).toMatchObject({ status: 'up', held: true });
  });
});

describe('readiness of the app when its machine ID is lost', () => {
  const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
  let redis: Redis;
  let proxy: FaultProxy;
  let proxied: Redis;
  let holder: MachineIdHolder;
  let app: INestApplication;
  const namespace = uniqueName('registration_health');

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    const through = await proxyUrl('redis', redisUrl());
    proxy = through.proxy;
    proxied = new Redis(through.url, { retryStrategy: () => 20 });
    proxied.on('error', () => undefined);
    // The app's machine ID on a short lease, from a namespace of one bit (two IDs), through the proxy.
    holder = await MachineIdHolder.acquire({
      distributor: new RedisMachineIdDistributor(proxied, { safeGuardMs: 300, guardIntervalMs: 100 }),
      namespace,
      machineBits: 1,
      instanceId: 'registration-1',
      logger: quiet,
    });
    app = await createTestApp(memoryBackend.config(), (builder) =>
      builder.overrideProvider(MachineIdHolder).useValue(holder),
    );
  });

  afterAll(async () => {
    proxy?.heal({ reset: true });
    await app?.close();
    await holder?.release().catch(() => undefined);
    if (redis) {
      const keys = new RedisMachineIdDistributor(redis).keys(namespace);
      await Promise.all(Object.values(keys).map((key) => redis.del(key)));
    }
    proxied?.disconnect();
    await proxy?.close();
    redis?.disconnect();
  });

  it('a lost machine ID that cannot be replaced: 503 naming the lease; an ID free again: 200', async () => {
    const http = request(app.getHttpServer());
    // Loading the app's modules may have held up the heartbeat past the short lease: it renews.
    const ready = await waitFor(
      'readiness',
      async () => {
        const r = await http.get('/health/ready');
        expect({ status: r.status, body: r.body }).toMatchObject({ status: 200 });
        return r;
      },
      { timeoutMs: 10_000 },
    );
    expect(ready.body.details['machine-id']).toMatchObject({ status: 'up', held: true, machineId: holder.machineId });

    // Another instance holds the other ID; this one is cut off past its lease and a newcomer takes its ID.
    const direct = new RedisMachineIdDistributor(redis, { safeGuardMs: 60_000 });
    const other = await direct.distribute({ namespace, machineBits: 1, instanceId: 'other' });
    const lostId = holder.machineId;
    proxy.blackhole();
    await waitFor('the lease running out', () => !holder.lease.valid);
    // The distributor's deadline (safeGuardMs after the last heartbeat) comes a little after the lease's end.
    const newcomer = await waitFor('the distributor to hand the lost ID to a newcomer', () =>
      direct.distribute({ namespace, machineBits: 1, instanceId: 'newcomer' }),
    );
    expect(newcomer.machineId).toBe(lostId);
    proxy.heal({ reset: true });

    const lost = await waitFor('readiness reporting the lost ID', async () => {
      const r = await http.get('/health/ready');
      expect(r.body.details?.['machine-id']).toMatchObject({ lost: true });
      return r;
    });
    expect(lost.status).toBe(503);
    expect(lost.body.error['machine-id']).toMatchObject({ status: 'down', held: false, lost: true, machineId: lostId });
    expect(lost.body.details['prepare-key']).toMatchObject({ status: 'up' });
    await direct.revert({
      namespace,
      machineBits: 1,
      instanceId: 'other',
      machineId: other.machineId,
      lastTimestamp: Date.now(),
    });
    const back = await waitFor('readiness turning green on the replacement ID', async () => {
      const r = await http.get('/health/ready');
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 200 });
      return r;
    });
    expect(back.body.details['machine-id']).toMatchObject({
      status: 'up',
      held: true,
      lost: false,
      machineId: other.machineId,
    });
  });
});

describe('readiness of the app whose Redis serves only the machine IDs (reservations and users in memory)', () => {
  let proxy: FaultProxy;
  let app: INestApplication;

  beforeAll(async () => {
    const through = await proxyUrl('redis', redisUrl());
    proxy = through.proxy;
    app = await createTestApp({ ...memoryBackend.config(), redisUrl: through.url, machineId: 'redis' });
  });

  afterAll(async () => {
    proxy?.heal({ reset: true });
    await app?.close();
    await proxy?.close();
  });

  it('lists Redis among the checks: black-holed, readiness is 503 naming it; healed, 200', async () => {
    const http = request(app.getHttpServer());
    const ready = await waitFor('readiness', async () => {
      const r = await http.get('/health/ready');
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 200 });
      return r;
    });
    expect(Object.keys(ready.body.details).sort()).toEqual(['machine-id', 'prepare-key', 'redis', 'repository']);
    expect(ready.body.details.redis).toEqual({ status: 'up', responseTime: expect.any(Number) });

    proxy.blackhole();
    try {
      const down = await waitFor('readiness turning red', async () => {
        const r = await http.get('/health/ready');
        expect({ status: r.status, body: r.body }).toMatchObject({ status: 503 });
        return r;
      });
      expect(Object.keys(down.body.error)).toEqual(['redis']);
      expect(down.body.details['prepare-key']).toMatchObject({ status: 'up', backend: 'MemoryPrepareKeyFactory' });
    } finally {
      proxy.heal({ reset: true });
    }
    await waitFor('readiness turning green again', async () => {
      const r = await http.get('/health/ready');
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 200 });
      return r;
    });
  });
});

describe('readiness of the app on PostgreSQL with the outbox relay parked', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;
  let app: INestApplication;

  beforeAll(async () => {
    schema = await postgresSchema('health_outbox');
    pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    // outboxRelay false: events are stored with each write and nothing delivers them.
    app = await createTestApp({
      prepareBackend: 'postgres',
      repositoryBackend: 'postgres',
      machineId: 'postgres',
      databaseUrl: schema.url,
      port: 0,
      outboxRelay: false,
    });
  });

  afterAll(async () => {
    await app?.close();
    await pool?.end();
    await schema?.drop();
  });

  it('lists the outbox backlog; an event older than 60 s makes readiness 503 naming the outbox', async () => {
    const http = request(app.getHttpServer());
    await http
      .post('/users')
      .send({ username: freshName('ob') })
      .expect(201);
    const ready = await http.get('/health/ready').expect(200);
    expect(ready.body.details.outbox).toEqual({
      status: 'up',
      pending: 1,
      oldestPendingAgeMs: expect.any(Number),
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });

    // The parked event, stored (and due) two minutes ago as far as the outbox can tell.
    const { rowCount } = await pool.query(
      'UPDATE ddd_kit_outbox SET stored_at = stored_at - $1, next_attempt_at = next_attempt_at - $1',
      [120_000],
    );
    expect(rowCount).toBe(1);
    const down = await http.get('/health/ready').expect(503);
    expect(Object.keys(down.body.error)).toEqual(['outbox']);
    expect(down.body.error.outbox).toMatchObject({
      status: 'down',
      pending: 1,
      deadLetters: 0,
      message: expect.stringMatching(/^the oldest pending event is \d+ ms old \(maxLagMs 60000\)$/),
    });
  });
});
