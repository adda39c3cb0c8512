import { IdGeneratorModule, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { PrepareKeyModule, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { Redis } from 'ioredis';
import type { AppConfig } from '../config/app-config.js';
import { MACHINE_ID_NAMESPACE, required, type Backend, type StoreConnection } from './backend.js';

// Redis: the username reservations, and machine IDs leased one per instance.

export const REDIS_CLIENT = Symbol('REDIS_CLIENT');

/** Reservations of this app in a Redis it may share with others. */
const DEFAULT_PREPARE_KEY_PREFIX = 'registration:prepare';

export const redisConnection: StoreConnection<Redis> = {
  token: REDIS_CLIENT,
  async open(config) {
    // Auto-pipelining batches the commands of concurrent requests into one round trip.
    const redis = new Redis(required(config.redisUrl, 'REDIS_URL'), {
      lazyConnect: true,
      enableAutoPipelining: true,
      maxRetriesPerRequest: 2,
    });
    await redis.connect();
    return redis;
  },
  close: (redis) => redis.quit().catch(() => redis.disconnect()),
};

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
