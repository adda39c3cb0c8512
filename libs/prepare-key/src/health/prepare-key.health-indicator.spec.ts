// The PrepareKey health indicator on every backend: up while the store answers, down when it
// does not (the store behind the fault proxy, black-holed: nothing passes either way), up again
// once it answers. Servers come from test/support; a missing one fails the test naming it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { Cluster, Redis } from 'ioredis';
import mongoose from 'mongoose';
import pg from 'pg';
import { proxyRedisCluster, proxyUrl, type FaultProxy } from '../../../../test/support/fault-proxy/index.js';
import {
  mongoLabel,
  mongoUri,
  postgresUrl,
  redisClusterNodes,
  redisUrl,
  uniqueName,
} from '../../../../test/support/servers.js';
import { MemoryPrepareKeyFactory } from '../backends/memory/memory-prepare-key.factory.js';
import { MongoPrepareKeyFactory } from '../backends/mongo/mongo-prepare-key.factory.js';
import { PostgresPrepareKeyFactory } from '../backends/postgres/postgres-prepare-key.factory.js';
import { RedisPrepareKeyFactory } from '../backends/redis/redis-prepare-key.factory.js';
import type { PrepareKey } from '../prepare-key.js';
import { PrepareKeyFactory } from '../prepare-key.factory.js';
import { PrepareKeyModule } from '../prepare-key.module.js';
import { PrepareKeyHealthIndicator } from './prepare-key.health-indicator.js';

/** What a probe may take before the indicator reports the store down. */
const TIMEOUT_MS = 300;

const indicatorFor = (factory: PrepareKeyFactory) =>
  new PrepareKeyHealthIndicator(new HealthIndicatorService(), { factory });

/** Polls the indicator until it reports `status` (the store may take a moment to reconnect). */
async function until(indicator: PrepareKeyHealthIndicator, status: 'up' | 'down', deadlineMs = 20_000) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const result = (await indicator.isHealthy('store', { timeoutMs: TIMEOUT_MS })).store;
    if (result.status === status) return result;
    if (Date.now() > deadline)
      throw new Error(
        `the indicator did not report ${status} within ${deadlineMs} ms; last: ${JSON.stringify(result)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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
        .createConnection(url, { dbName: uniqueName('pk_health'), serverSelectionTimeoutMS: 2_000 })
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
    expect(await until(indicator, 'up')).toEqual({ status: 'up', backend, responseTime: expect.any(Number) });

    for (const proxy of target.proxies) proxy.blackhole();
    const down = await until(indicator, 'down');
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
    expect(await until(indicator, 'up')).toMatchObject({ status: 'up', backend });
  });

  it('is down, naming the backend and the reason, when the connections are reset', async () => {
    const indicator = indicatorFor(target.factory);
    await until(indicator, 'up');
    // Every connection reset, and new ones refused until healed: the store is gone, not slow.
    for (const proxy of target.proxies) {
      proxy.blackhole();
      proxy.resetAll();
    }
    const down = await until(indicator, 'down');
    expect(down.message).toEqual(expect.any(String));
    for (const proxy of target.proxies) proxy.heal({ reset: true });
    await until(indicator, 'up');
  });
});

describe('PrepareKeyHealthIndicator', () => {
  it('is up on the memory backend, which has no store to reach', async () => {
    const result = await indicatorFor(new MemoryPrepareKeyFactory()).isHealthy();
    expect(result).toEqual({
      'prepare-key': { status: 'up', backend: 'MemoryPrepareKeyFactory', responseTime: expect.any(Number) },
    });
  });

  it('reads a probe key through a factory written elsewhere, and reports its error as down', async () => {
    const got: string[] = [];
    let failure: Error | undefined;
    class CustomFactory extends PrepareKeyFactory {
      create<V>(name: string): PrepareKey<V> {
        const key = new MemoryPrepareKeyFactory().create<V>(name);
        return Object.assign(Object.create(key) as PrepareKey<V>, {
          get: async (k: string) => {
            got.push(`${name}/${k}`);
            if (failure) throw failure;
            return undefined;
          },
        });
      }
    }
    const indicator = indicatorFor(new CustomFactory());
    expect((await indicator.isHealthy())['prepare-key']).toMatchObject({ status: 'up', backend: 'CustomFactory' });
    expect(got).toEqual(['ddd-kit-ping/probe']);
    failure = new Error('connection refused');
    expect((await indicator.isHealthy())['prepare-key']).toMatchObject({
      status: 'down',
      message: 'CustomFactory: connection refused',
    });

    // One that implements the contract structurally (no ping() of its own) gets the same probe.
    failure = undefined;
    got.length = 0;
    const structural = { create: <V>(name: string) => new CustomFactory().create<V>(name) } as PrepareKeyFactory;
    expect((await indicatorFor(structural).isHealthy())['prepare-key']).toMatchObject({
      status: 'up',
      backend: 'PrepareKeyFactory',
    });
    expect(got).toEqual(['ddd-kit-ping/probe']);
  });

  it('is up and says so when the module is disabled or has no factory (nothing to reach)', async () => {
    expect(await new PrepareKeyHealthIndicator(new HealthIndicatorService(), { enabled: false }).isHealthy()).toEqual({
      'prepare-key': { status: 'up', backend: 'disabled' },
    });
    expect(await new PrepareKeyHealthIndicator(new HealthIndicatorService(), {}).isHealthy()).toEqual({
      'prepare-key': { status: 'up', backend: 'none' },
    });
  });

  it('sees the Redis client the module opened for `redis: { url }`: down while it is black-holed, up once healed', async () => {
    const { proxy, url } = await proxyUrl('redis', redisUrl());
    const moduleRef = await Test.createTestingModule({
      imports: [PrepareKeyModule.forRoot({ redis: { url, keyPrefix: `${uniqueName('health')}:` } }), TerminusModule],
      providers: [PrepareKeyHealthIndicator],
    }).compile();
    await moduleRef.init();
    try {
      const indicator = moduleRef.get(PrepareKeyHealthIndicator);
      expect(await until(indicator, 'up')).toMatchObject({ backend: 'RedisPrepareKeyFactory' });
      proxy.blackhole();
      expect(await until(indicator, 'down')).toMatchObject({ status: 'down', message: expect.any(String) });
      proxy.heal({ reset: true });
      expect(await until(indicator, 'up')).toMatchObject({ backend: 'RedisPrepareKeyFactory' });
    } finally {
      proxy.heal({ reset: true });
      await moduleRef.close();
      await proxy.close();
    }
  });

  it('finds the factory PrepareKeyModule was given, in a module that imports TerminusModule', async () => {
    @Controller('health')
    class HealthController {
      constructor(
        @Inject(HealthCheckService) private readonly health: HealthCheckService,
        @Inject(PrepareKeyHealthIndicator) private readonly prepareKey: PrepareKeyHealthIndicator,
      ) {}

      @Get()
      check() {
        return this.health.check([() => this.prepareKey.isHealthy()]);
      }
    }
    @Module({ imports: [TerminusModule], controllers: [HealthController], providers: [PrepareKeyHealthIndicator] })
    class HealthModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [
        PrepareKeyModule.forRootAsync({ useFactory: () => ({ factory: new MemoryPrepareKeyFactory() }) }),
        HealthModule,
      ],
    }).compile();
    try {
      const result = await moduleRef.get(HealthController).check();
      expect(result).toMatchObject({
        status: 'ok',
        details: { 'prepare-key': { status: 'up', backend: 'MemoryPrepareKeyFactory' } },
      });
    } finally {
      await moduleRef.close();
    }
  });
});
