import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { PrepareKeyConnectionError, PrepareKeyModuleOptionsError } from '../../errors.js';
import type {
  PrepareKeyModuleOptions,
  PrepareKeyRedisOptions,
} from '../../interfaces/prepare-key-module-options.interface.js';
import { closeRedis, connectionProblem, describeRedis, openRedis } from '@ddd-kit/core/redis';
import { checkRedisPrepareKeyFactoryOptions, RedisPrepareKeyFactory } from './redis-prepare-key.factory.js';

const logger = new Logger('PrepareKeyModule');

/** The client PrepareKeyModule opened for `redis: { url }`, and the factory on it. */
export interface OwnedRedisBackend {
  factory: RedisPrepareKeyFactory;
  close(): Promise<void>;
}

/**
 * `redis: { url }`: checks the options, opens the client (one clear error when Redis cannot be
 * reached) and builds the factory on it. Null when the options name no such client.
 */
export async function openOwnedRedisBackend(
  options: PrepareKeyModuleOptions | undefined,
): Promise<OwnedRedisBackend | null> {
  const redis = options?.redis;
  if (redis === undefined) return null;
  const problem = connectionProblem(redis);
  if (problem !== undefined) throw new PrepareKeyModuleOptionsError(`PrepareKeyModule redis ${problem}`);
  if (options?.factory !== undefined) {
    throw new PrepareKeyModuleOptionsError(
      'PrepareKeyModule: pass either factory (your backend and client) or redis: { url } (a client the module opens and closes), not both',
    );
  }
  if (options?.enabled === false) return null;
  const { url, options: clientOptions, ...factoryOptions } = redis as PrepareKeyRedisOptions;
  // Checked before connecting: a bad keyPrefix must not leave a client open.
  checkRedisPrepareKeyFactoryOptions(factoryOptions);
  const client: Redis = await openRedis(
    { url, options: clientOptions },
    logger,
    (cause) =>
      new PrepareKeyConnectionError(
        `PrepareKeyModule: cannot connect to Redis at ${describeRedis({ url, options: clientOptions })} for the reservations ` +
          `(${cause.message}). Start Redis, or correct redis.url; the application did not start.`,
        { cause },
      ),
  );
  return { factory: new RedisPrepareKeyFactory(client, factoryOptions), close: () => closeRedis(client) };
}
