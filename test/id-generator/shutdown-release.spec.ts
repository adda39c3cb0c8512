import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  Inject,
  Module,
  type DynamicModule,
  type INestApplicationContext,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import {
  IdGeneratorModule,
  MachineIdHolder,
  MachineIdStoreError,
  RedisMachineIdDistributor,
} from '@ddd-kit/id-generator';
import { freePort } from '../support/server-provider.js';
import { redisUrl, uniqueName } from '../support/servers.js';

// Issue 14: "who closes the Redis client, and when". Each application below is configured the
// way a README shows, closed with app.close(), and then Redis itself is asked whether the
// machine ID was given back.

const REDIS_CLIENT = 'REDIS_CLIENT';

let checker: Redis;

beforeAll(() => {
  checker = new Redis(redisUrl());
});

afterAll(async () => {
  await checker.quit();
});

afterEach(() => {
  jest.restoreAllMocks();
});

/** The machine ID's entries in Redis, read directly. */
async function stored(keyPrefix: string, namespace: string, machineId: number) {
  const keys = new RedisMachineIdDistributor(checker, { keyPrefix }).keys(namespace);
  return {
    owner: await checker.hget(keys.owners, String(machineId)),
    released: (await checker.zscore(keys.released, String(machineId))) !== null,
  };
}

async function start(root: DynamicModule | Function): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(root as never, { logger: false, abortOnError: false });
}

/**
 * The user's own client in a module of theirs, closed in the hook they chose. Imported where it
 * is used (not global): Nest then runs its onModuleDestroy before IdGeneratorModule's, so a
 * quit() there closes the client before the release is sent.
 */
function userRedisModule(hook: 'onModuleDestroy' | 'onApplicationShutdown') {
  @Module({ providers: [{ provide: REDIS_CLIENT, useFactory: () => new Redis(redisUrl()) }], exports: [REDIS_CLIENT] })
  class UserRedisModule implements OnModuleDestroy, OnApplicationShutdown {
    constructor(@Inject(REDIS_CLIENT) private readonly redis: Redis) {}
    async onModuleDestroy(): Promise<void> {
      if (hook === 'onModuleDestroy') await this.redis.quit();
    }
    async onApplicationShutdown(): Promise<void> {
      if (hook === 'onApplicationShutdown') await this.redis.quit();
    }
  }
  return UserRedisModule;
}

describe('closing an application gives its machine ID back (Redis checked directly)', () => {
  it('machine: { redis: { url } } — the module owns the client and closes it after the release', async () => {
    const keyPrefix = `${uniqueName('owned')}:`;
    const namespace = 'orders';
    @Module({ imports: [IdGeneratorModule.forRoot({ namespace, machine: { redis: { url: redisUrl(), keyPrefix } } })] })
    class AppModule {}
    const app = await start(AppModule);
    const holder = app.get(MachineIdHolder);
    expect(await stored(keyPrefix, namespace, holder.machineId)).toEqual({ owner: holder.instanceId, released: false });
    const copies = jest.spyOn(Redis.prototype, 'duplicate');

    await app.close(); // resolves: nothing of the module's is left open

    // The release went over the module's client while it was open (no stand-in copy needed).
    expect(copies).not.toHaveBeenCalled();

    expect(await stored(keyPrefix, namespace, holder.machineId)).toEqual({ owner: null, released: true });
  });

  it('forRootAsync returning machine: { redis: { url } } does the same', async () => {
    const keyPrefix = `${uniqueName('owned_async')}:`;
    @Module({
      imports: [
        IdGeneratorModule.forRootAsync({
          useFactory: async () => ({ namespace: 'n', machine: { redis: { url: redisUrl(), keyPrefix } } }),
        }),
      ],
    })
    class AppModule {}
    const app = await start(AppModule);
    const holder = app.get(MachineIdHolder);
    const copies = jest.spyOn(Redis.prototype, 'duplicate');
    await app.close();
    expect(copies).not.toHaveBeenCalled();
    expect(await stored(keyPrefix, 'n', holder.machineId)).toEqual({ owner: null, released: true });
  });

  it.each(['onApplicationShutdown', 'onModuleDestroy'] as const)(
    'your own client closed in your %s — the release still reaches Redis',
    async (hook) => {
      const keyPrefix = `${uniqueName(`own_${hook}`)}:`;
      const UserRedisModule = userRedisModule(hook);
      @Module({
        imports: [
          UserRedisModule,
          IdGeneratorModule.forRootAsync({
            imports: [UserRedisModule],
            inject: [REDIS_CLIENT],
            useFactory: (redis: Redis) => ({
              namespace: 'n',
              machine: new RedisMachineIdDistributor(redis, { keyPrefix }),
            }),
          }),
        ],
      })
      class AppModule {}
      const app = await start(AppModule);
      const holder = app.get(MachineIdHolder);
      const quit = jest.spyOn(app.get<Redis>(REDIS_CLIENT), 'quit');
      await app.close();
      expect(quit).toHaveBeenCalledTimes(1);
      expect(await stored(keyPrefix, 'n', holder.machineId)).toEqual({ owner: null, released: true });
    },
  );
});

describe('Redis down at start-up: one error that names the step and what to do', () => {
  it('machine: { redis: { url } } on a port where nothing listens', async () => {
    const unhandled = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const url = `redis://:secret@127.0.0.1:${await freePort()}`;
    @Module({ imports: [IdGeneratorModule.forRoot({ machine: { redis: { url } } })] })
    class AppModule {}
    const error = (await start(AppModule).then(
      () => {
        throw new Error('started with Redis down');
      },
      (e: unknown) => e,
    )) as Error;
    expect(error).toBeInstanceOf(MachineIdStoreError);
    expect(error.message).toMatch(
      /^IdGeneratorModule: cannot connect to Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/? to lease a machine ID \(.*ECONNREFUSED.*\)\. Start Redis, or correct machine\.redis\.url/,
    );
    expect(error.message).not.toContain('secret');
    expect(unhandled.mock.calls.map((call) => String(call[0]))).not.toContainEqual(
      expect.stringContaining('[ioredis]'),
    );
  });

  it('your own client on a port where nothing listens: the acquire step is named, with the driver error as cause', async () => {
    const redis = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      maxRetriesPerRequest: 1,
      retryStrategy: () => 10,
    });
    redis.on('error', () => undefined);
    @Module({
      imports: [IdGeneratorModule.forRoot({ namespace: 'down', machine: new RedisMachineIdDistributor(redis) })],
    })
    class AppModule {}
    try {
      const error = (await start(AppModule).then(
        () => {
          throw new Error('started with Redis down');
        },
        (e: unknown) => e,
      )) as Error;
      expect(error).toBeInstanceOf(MachineIdStoreError);
      expect(error.message).toMatch(
        /^IdGeneratorModule: acquiring a machine ID of namespace "down" from RedisMachineIdDistributor failed \(.+\)\. Check that its store is reachable/,
      );
      expect(error.cause).toBeInstanceOf(Error);
    } finally {
      redis.disconnect();
    }
  });

  it('a bad machine.redis.url is refused before anything connects', async () => {
    @Module({ imports: [IdGeneratorModule.forRoot({ machine: { redis: { url: 'http://localhost:6379' } } })] })
    class AppModule {}
    await expect(start(AppModule)).rejects.toThrow(/machine\.redis url must be a redis:\/\/ or rediss:\/\/ URL/);
  });
});

describe('RedisMachineIdDistributor.revert on a client the application closed already', () => {
  it.each(['quit', 'disconnect'] as const)(
    'after %s(): sent on a short-lived copy, and the ID is released',
    async (close) => {
      const keyPrefix = `${uniqueName(`closed_${close}`)}:`;
      const redis = new Redis(redisUrl());
      const distributor = new RedisMachineIdDistributor(redis, { keyPrefix });
      const request = { namespace: 'n', machineBits: 4, instanceId: 'i-1' };
      const { machineId, lastTimestamp } = await distributor.distribute(request);
      if (close === 'quit') await redis.quit();
      else redis.disconnect();
      await expect(distributor.revert({ ...request, machineId, lastTimestamp })).resolves.toBe(true);
      expect(await stored(keyPrefix, 'n', machineId)).toEqual({ owner: null, released: true });
    },
  );
});
