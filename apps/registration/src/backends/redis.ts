import { Logger } from '@nestjs/common';
import { IdGeneratorModule, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { IdempotencyModule, RedisIdempotencyStore } from '@ddd-kit/idempotency';
import { PrepareKeyModule, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { Redis } from 'ioredis';
import type { AppConfig } from '../config/app-config.js';
import { idempotencyOptions, MACHINE_ID_NAMESPACE, required, type Backend, type StoreConnection } from './backend.js';

// Redis: the username reservations, machine IDs leased one per instance, and the records of
// repeated requests when the users are not on PostgreSQL.

export const REDIS_CLIENT = Symbol('REDIS_CLIENT');

/** Reservations of this app in a Redis it may share with others. */
const DEFAULT_PREPARE_KEY_PREFIX = 'registration:prepare';

export const redisConnection: StoreConnection<Redis> = {
  token: REDIS_CLIENT,
  async open(config) {
    // Auto-pipelining batches the commands of concurrent requests into one round trip. A Redis
    // that stops answering: the ddd-kit operations give up after their own deadline (2 s by
    // default), and commandTimeout bounds every other command (the readiness PING).
    const redis = new Redis(required(config.redisUrl, 'REDIS_URL'), {
      lazyConnect: true,
      enableAutoPipelining: true,
      maxRetriesPerRequest: 2,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    });
    logOutages(redis);
    await redis.connect();
    return redis;
  },
  close: (redis) => redis.quit().catch(() => redis.disconnect()),
};

/** How long one command waits for Redis before it fails (ioredis `commandTimeout`). */
const REDIS_COMMAND_TIMEOUT_MS = 5_000;

/**
 * A restart or an outage of Redis is logged once, and again once it is back; ioredis reconnects by
 * itself meanwhile. (Without an 'error' listener ioredis prints every failed attempt.)
 */
function logOutages(redis: Redis): void {
  const logger = new Logger('Connections');
  let down = false;
  redis.on('error', (error: Error) => {
    if (down || redis.status === 'end') return;
    down = true;
    logger.warn(`Redis: ${error.message} (reconnecting)`);
  });
  redis.on('ready', () => {
    if (down) logger.log('Redis: connected again');
    down = false;
  });
}

export const redisReservations = (config: AppConfig): Backend => ({
  connection: redisConnection,
  module: PrepareKeyModule.forRootAsync({
    inject: [REDIS_CLIENT],
    useFactory: (redis: Redis) => ({
      factory: new RedisPrepareKeyFactory(redis, {
        keyPrefix: `${config.prepareKeyPrefix ?? DEFAULT_PREPARE_KEY_PREFIX}:`,
      }),
    }),
  }),
});

/** MACHINE_ID=redis (the default when REDIS_URL is set). */
export const redisMachineId = (): Backend => ({
  connection: redisConnection,
  module: IdGeneratorModule.forRootAsync({
    inject: [REDIS_CLIENT],
    useFactory: (redis: Redis) => ({ namespace: MACHINE_ID_NAMESPACE, machine: new RedisMachineIdDistributor(redis) }),
  }),
});

/**
 * The records of repeated requests, beside a repository that keeps none (MongoDB): a crash
 * between the user's write and the record's completion leaves the key in progress (a repeat is
 * a 409) until its lease ends, never a second run. Apart from other apps on one Redis by
 * PREPARE_KEY_PREFIX, as the reservations are.
 */
export const redisIdempotency = (config: AppConfig): Backend => ({
  connection: redisConnection,
  module: IdempotencyModule.forRootAsync({
    inject: [REDIS_CLIENT],
    useFactory: (redis: Redis) =>
      idempotencyOptions(
        config,
        new RedisIdempotencyStore(redis, {
          keyPrefix: `${config.prepareKeyPrefix ?? DEFAULT_PREPARE_KEY_PREFIX}:idempotency:`,
        }),
      ),
  }),
});
