// The PrepareKey health indicator on every backend: up while the store answers, down when it
// does not (the store behind the fault proxy, black-holed: nothing passes either way), up again
// once it answers. Servers come from test/support; a missing one fails the test naming it.
// Without a store to reach: libs/prepare-key/src/health/prepare-key.health-indicator.spec.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { Cluster, Redis } from 'ioredis';
import mongoose from 'mongoose';
import pg from 'pg';
import { proxyRedisCluster, proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { mongoLabel, mongoUri, postgresUrl, redisClusterNodes, redisUrl, uniqueName } from '../support/servers.js';
import {
  MongoPrepareKeyFactory,
  PostgresPrepareKeyFactory,
  type PrepareKeyFactory,
  PrepareKeyModule,
  RedisPrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import { PrepareKeyHealthIndicator } from '@ddd-kit/prepare-key/health';
import { waitFor } from '../support/wait.js';

/** What a probe may take before the indicator reports the store down. */
const TIMEOUT_MS = 300;

const indicatorFor = (factory: PrepareKeyFactory) =>
  new PrepareKeyHealthIndicator(new HealthIndicatorService(), { factory });

/** The indicator's report once it says `status` (the store may take a moment to reconnect). */
function reports(indicator: PrepareKeyHealthIndicator, status: 'up' | 'down') {
  return waitFor(`the indicator to report ${status}`, async () => {
    const result = (await indicator.isHealthy('store', { timeoutMs: TIMEOUT_MS })).store;
    expect(result).toMatchObject({ status });
    return result;
  });
}

interface Target {
  factory: PrepareKeyFactory;
  proxies: FaultProxy[];
  close(): Promise<void>;
}

const backends: Array<[string, string, () => Promise<Target>]> = [
  [
    'Redis',
    'RedisPrepareKeyFactory',
    async () => {
      const { proxy, url } = await proxyUrl('redis', redisUrl());
      const client = new Redis(url, { retryStrategy: () => 20 });
      client.on('error', () => undefined);
      return {
        factory: new RedisPrepareKeyFactory(client, { keyPrefix: `${uniqueName('pk_health')}:` }),
        proxies: [proxy],
        close: async () => {
          client.disconnect();
          await proxy.close();
        },
      };
    },
  ],
  [
    'Redis Cluster (one master black-holed)',
    'RedisPrepareKeyFactory',
    async () => {
      const through = await proxyRedisCluster(redisClusterNodes());
      const cluster = new Cluster(through.startupNodes, { natMap: through.natMap, clusterRetryStrategy: () => 20 });
      cluster.on('error', () => undefined);
      await cluster.ping();
      // Only the proxy of the last master: a ping of any one node would miss it.
      const masters = cluster.nodes('master').map((node) => `${node.options.host}:${node.options.port}`);
      const last = through.proxies.find((proxy) => masters.at(-1) === `${proxy.host}:${proxy.port}`);
      if (!last) throw new Error(`no proxy in front of master ${masters.at(-1)}`);
      return {
        factory: new RedisPrepareKeyFactory(cluster, { keyPrefix: `${uniqueName('pk_health')}:` }),
        proxies: [last],
        close: async () => {
          cluster.disconnect();
          await through.close();
        },
      };
    },
  ],
  [
    mongoLabel(),
    'MongoPrepareKeyFactory',
    async () => {
      const { proxy, url } = await proxyUrl('mongo', mongoUri());
      const connection = await mongoose
        // The driver finds a server it lost again at its next heartbeat (every 10 s by default).
        .createConnection(url, {
          dbName: uniqueName('pk_health'),
          serverSelectionTimeoutMS: 2_000,
          heartbeatFrequencyMS: 500,
        })
        .asPromise();
      return {
        factory: new MongoPrepareKeyFactory(connection),
        proxies: [proxy],
        close: async () => {
          await connection.close(true).catch(() => undefined);
          await proxy.close();
        },
      };
    },
  ],
  [
    'PostgreSQL',
    'PostgresPrepareKeyFactory',
    async () => {
      const { proxy, url } = await proxyUrl('postgres', postgresUrl());
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      pool.on('error', () => undefined);
      const factory = new PostgresPrepareKeyFactory(pool, { table: uniqueName('pk_health') });
      return {
        factory,
        proxies: [proxy],
        close: async () => {
          await factory.close();
          await proxy.close();
          await pool.end().catch(() => undefined);
        },
      };
    },
  ],
];

describe.each(backends)('PrepareKeyHealthIndicator on %s', (_label, backend, open) => {
  let target: Target;

  beforeAll(async () => {
    target = await open();
  });

  afterAll(async () => {
    for (const proxy of target?.proxies ?? []) proxy.heal({ reset: true });
    await target?.close();
  });

  it('is up while the store answers, down while it is black-holed, up again once it answers', async () => {
    const indicator = indicatorFor(target.factory);
    expect(await reports(indicator, 'up')).toEqual({ status: 'up', backend, responseTime: expect.any(Number) });

    for (const proxy of target.proxies) proxy.blackhole();
    const down = await reports(indicator, 'down');
    expect(down).toEqual({
      status: 'down',
      message: `timeout of ${TIMEOUT_MS}ms exceeded`,
      responseTime: expect.any(Number),
    });
    // Every probe, not some: on a Cluster each master is asked (a ping of one node would pass two times in three).
    const again = await Promise.all(
      Array.from({ length: 6 }, () => indicator.isHealthy('store', { timeoutMs: TIMEOUT_MS })),
    );
    expect(again.map((result) => result.store.status)).toEqual(Array(6).fill('down'));

    for (const proxy of target.proxies) proxy.heal({ reset: true });
    expect(await reports(indicator, 'up')).toMatchObject({ status: 'up', backend });
  });

  it('is down, naming the backend and the reason, when the connections are reset', async () => {
    const indicator = indicatorFor(target.factory);
    await reports(indicator, 'up');
    // Every connection reset, and new ones refused until healed: the store is gone, not slow.
    for (const proxy of target.proxies) {
      proxy.blackhole();
      proxy.resetAll();
    }
    const down = await reports(indicator, 'down');
    expect(down.message).toEqual(expect.any(String));
    for (const proxy of target.proxies) proxy.heal({ reset: true });
    await reports(indicator, 'up');
  });
});

describe('PrepareKeyHealthIndicator in PrepareKeyModule', () => {
  it('sees the Redis client the module opened for `redis: { url }`: down while it is black-holed, up once healed', async () => {
    const { proxy, url } = await proxyUrl('redis', redisUrl());
    const moduleRef = await Test.createTestingModule({
      imports: [PrepareKeyModule.forRoot({ redis: { url, keyPrefix: `${uniqueName('health')}:` } }), TerminusModule],
      providers: [PrepareKeyHealthIndicator],
    }).compile();
    await moduleRef.init();
    try {
      const indicator = moduleRef.get(PrepareKeyHealthIndicator);
      expect(await reports(indicator, 'up')).toMatchObject({ backend: 'RedisPrepareKeyFactory' });
      proxy.blackhole();
      expect(await reports(indicator, 'down')).toMatchObject({ status: 'down', message: expect.any(String) });
      proxy.heal({ reset: true });
      expect(await reports(indicator, 'up')).toMatchObject({ backend: 'RedisPrepareKeyFactory' });
    } finally {
      proxy.heal({ reset: true });
      await moduleRef.close();
      await proxy.close();
    }
  });
});
