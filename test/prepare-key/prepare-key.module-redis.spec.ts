import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type INestApplicationContext,
  type OnModuleDestroy,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { IdGeneratorModule, MachineIdHolder, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { MemoryPrepareKeyFactory, PreparableKey, PrepareKey, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { PrepareKeyConnectionError, PrepareKeyModuleOptionsError } from '../../libs/prepare-key/src/errors.js';
import { freePort } from '../support/server-provider.js';
import { redisUrl, uniqueName } from '../support/servers.js';

// PrepareKeyModule.forRoot({ redis: { url } }): the module opens the client, fails the start-up
// with one clear error when Redis is down, and closes the client last on shutdown.

@PreparableKey('sku')
abstract class SkuPrepareKey extends PrepareKey<string> {}

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

async function start(root: Function): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(root as never, { logger: false, abortOnError: false });
}

async function startError(root: Function): Promise<Error> {
  try {
    const app = await start(root);
    await app.close();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the application started, but it should have failed');
}

describe('PrepareKeyModule with redis: { url }', () => {
  it('serves the keys from Redis under keyPrefix, and app.close() closes the client', async () => {
    const keyPrefix = `${uniqueName('owned')}:`;
    @Module({
      imports: [PrepareKeyModule.forRoot({ include: [SkuPrepareKey], redis: { url: redisUrl(), keyPrefix } })],
    })
    class AppModule {}
    const app = await start(AppModule);
    expect(await app.get(SkuPrepareKey).prepare('A-1', 'order-1')).toBe(true);
    expect(await checker.get(`${keyPrefix}{sku:A-1}`)).not.toBeNull();
    const quit = jest.spyOn(Redis.prototype, 'quit');
    await app.close();
    expect(quit).toHaveBeenCalledTimes(1);
  });

  it('forRootAsync may return redis: { url } too', async () => {
    const keyPrefix = `${uniqueName('owned_async')}:`;
    @Module({
      imports: [
        PrepareKeyModule.forRootAsync({
          include: [SkuPrepareKey],
          useFactory: async () => ({ redis: { url: redisUrl(), keyPrefix } }),
        }),
      ],
    })
    class AppModule {}
    const app = await start(AppModule);
    expect(await app.get(SkuPrepareKey).prepare('B-1', 'x')).toBe(true);
    await app.close();
    expect(await checker.get(`${keyPrefix}{sku:B-1}`)).not.toBeNull();
  });

  it('both modules on { redis: { url } }: onModuleDestroy and beforeApplicationShutdown still reach Redis, and the machine ID is released', async () => {
    const keyPrefix = `${uniqueName('together')}:`;
    const done: string[] = [];

    // A service that gives reservations back while the application closes, in both hooks that
    // run before the last phase (onApplicationShutdown, where the module closes its client).
    @Injectable()
    class Checkout implements OnModuleDestroy, BeforeApplicationShutdown {
      constructor(@Inject(SkuPrepareKey) private readonly skus: SkuPrepareKey) {}
      async onModuleDestroy(): Promise<void> {
        done.push(`rollback C-1 ${await this.skus.rollback('C-1')}`);
      }
      async beforeApplicationShutdown(): Promise<void> {
        done.push(`rollback C-2 ${await this.skus.rollback('C-2').catch((error: Error) => error.message)}`);
      }
    }
    @Module({ providers: [Checkout] })
    class CheckoutModule {}
    @Module({
      imports: [
        PrepareKeyModule.forRoot({
          include: [SkuPrepareKey],
          redis: { url: redisUrl(), keyPrefix: `${keyPrefix}prepare:` },
        }),
        IdGeneratorModule.forRoot({
          namespace: 'shop',
          machine: { redis: { url: redisUrl(), keyPrefix: `${keyPrefix}machine-id:` } },
        }),
        CheckoutModule,
      ],
    })
    class AppModule {}
    const app = await start(AppModule);
    await app.get(SkuPrepareKey).prepare('C-1', 'cart-1');
    await app.get(SkuPrepareKey).prepare('C-2', 'cart-2');
    const holder = app.get(MachineIdHolder);
    await app.close();

    expect(done).toEqual(['rollback C-1 true', 'rollback C-2 true']);
    const keys = new RedisMachineIdDistributor(checker, { keyPrefix: `${keyPrefix}machine-id:` }).keys('shop');
    expect(await checker.hget(keys.owners, String(holder.machineId))).toBeNull();
    expect(await checker.zscore(keys.released, String(holder.machineId))).not.toBeNull();
  });
});

describe('PrepareKeyModule redis: { url } misconfigured', () => {
  it('Redis down at start-up: one PrepareKeyConnectionError naming the step and what to do, no ioredis noise', async () => {
    const console_ = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const url = `redis://127.0.0.1:${await freePort()}`;
    @Module({ imports: [PrepareKeyModule.forRoot({ include: [SkuPrepareKey], redis: { url } })] })
    class AppModule {}
    const error = await startError(AppModule);
    expect(error).toBeInstanceOf(PrepareKeyConnectionError);
    expect(error.message).toMatch(
      /^PrepareKeyModule: cannot connect to Redis at redis:\/\/127\.0\.0\.1:\d+\/? for the reservations \(.*ECONNREFUSED.*\)\. Start Redis, or correct redis\.url/,
    );
    expect(console_.mock.calls.map((call) => String(call[0]))).not.toContainEqual(expect.stringContaining('[ioredis]'));
  });

  it.each([
    [
      'factory and redis together',
      { factory: new MemoryPrepareKeyFactory(), redis: { url: 'redis://localhost:6379' } },
      /either factory .* or redis/,
    ],
    [
      'a URL that is not redis://',
      { redis: { url: 'http://localhost:6379' } },
      /redis url must be a redis:\/\/ or rediss:\/\/ URL/,
    ],
    ['no url', { redis: {} }, /redis needs url/],
    [
      'a keyPrefix with a brace',
      { redis: { url: 'redis://127.0.0.1:1', keyPrefix: 'a{' } },
      /keyPrefix must be a string without/,
    ],
  ])('%s is refused before anything connects', async (_, options, message) => {
    @Module({ imports: [PrepareKeyModule.forRoot({ include: [SkuPrepareKey], ...(options as object) })] })
    class AppModule {}
    const error = await startError(AppModule);
    expect(error.message).toMatch(message);
    if (!/keyPrefix/.test(String(message))) expect(error).toBeInstanceOf(PrepareKeyModuleOptionsError);
  });
});
