import { Logger } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import { warnWithoutCommandTimeout } from '@ddd-kit/core/redis';
import { DEFAULT_OPERATION_TIMEOUT_MS, operationTimeoutProblem } from '@ddd-kit/core';
import { PrepareKeyArgumentError } from '../../errors/prepare-key-argument.error.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PrepareKeyFactory } from '../../prepare-key.factory.js';
import { assertName } from '../../prepare-key.validation.js';
import { DEFAULT_REDIS_KEY_PREFIX, DEFAULT_REDIS_RETENTION_MS } from './redis-prepare-key.constants.js';
import type { RedisPrepareKeyFactoryOptions } from './redis-prepare-key.interfaces.js';
import { RedisKeyScanner } from './redis-key-scanner.js';
import { pingRedis } from './redis-prepare-key.utils.js';
import { RedisPrepareKey, type RedisPrepareKeyContext } from './redis-prepare-key.js';
import { ServerClock } from '../../server-clock.js';

/**
 * PrepareKeys on Redis (a single node or a Cluster) through an ioredis client, shared by every
 * instance of an application. Each operation is atomic on one record key
 * `<keyPrefix>{<name>:<key>}` (a Lua script, or for `prepare` first a native `SET … NX GET`);
 * expiry is decided by the Redis server's clock; an expired record
 * stays readable by `getValue` for `retentionMs`, then Redis drops it by itself.
 *
 * The client stays the caller's: the factory neither connects nor closes it. Set
 * `enableAutoPipelining: true` on it when many callers run at once (see the README).
 */
export class RedisPrepareKeyFactory extends PrepareKeyFactory {
  private readonly context: RedisPrepareKeyContext;

  constructor(client: Redis | Cluster, options: RedisPrepareKeyFactoryOptions = {}) {
    super();
    if (typeof (client as Partial<Redis> | undefined)?.evalsha !== 'function') {
      throw new PrepareKeyArgumentError(
        'RedisPrepareKeyFactory: pass an ioredis client, `new Redis(url)` or `new Cluster(nodes)`',
      );
    }
    const { keyPrefix, retentionMs, operationTimeoutMs } = checkRedisPrepareKeyFactoryOptions(options);
    warnWithoutCommandTimeout(client, new Logger('PrepareKeyModule'), 'RedisPrepareKeyFactory');
    this.context = {
      client,
      keyPrefix,
      retentionMs,
      operationTimeoutMs,
      clock: new ServerClock(),
      scanner: new RedisKeyScanner(client),
      setNxGet: true,
    };
  }

  create<V = unknown>(name: string): PrepareKey<V> {
    assertName(name);
    return new RedisPrepareKey<V>(name, this.context);
  }

  /** PING; on a Cluster, to every master (records live on all of them). */
  override async ping(): Promise<void> {
    await pingRedis(this.context.client);
  }
}

/** The options with defaults applied; throws PrepareKeyArgumentError for one that cannot work. */
export function checkRedisPrepareKeyFactoryOptions(options: RedisPrepareKeyFactoryOptions): {
  keyPrefix: string;
  retentionMs: number;
  operationTimeoutMs: number;
} {
  const { retentionMs = DEFAULT_REDIS_RETENTION_MS, operationTimeoutMs = DEFAULT_OPERATION_TIMEOUT_MS } = options;
  const keyPrefix = resolveKeyPrefix(options);
  if (retentionMs !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(retentionMs) && retentionMs >= 0)) {
    throw new PrepareKeyArgumentError(
      `RedisPrepareKeyFactory: retentionMs must be a non-negative integer number of milliseconds (or Infinity), got ${String(retentionMs)}`,
    );
  }
  const timeoutProblem = operationTimeoutProblem(operationTimeoutMs);
  if (timeoutProblem !== undefined) throw new PrepareKeyArgumentError(`RedisPrepareKeyFactory: ${timeoutProblem}`);
  return { keyPrefix, retentionMs, operationTimeoutMs };
}

/** `keyPrefix` as given (the default when absent). */
function resolveKeyPrefix(options: RedisPrepareKeyFactoryOptions): string {
  const { keyPrefix } = options;
  if ('prefix' in options) {
    throw new PrepareKeyArgumentError(
      `RedisPrepareKeyFactory: the option 'prefix' is gone; use keyPrefix, which is used as given (prefix 'app' is keyPrefix 'app:')`,
    );
  }
  const chosen = keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  if (typeof chosen !== 'string' || /[{}]/.test(chosen)) {
    throw new PrepareKeyArgumentError(
      `RedisPrepareKeyFactory: keyPrefix must be a string without '{' or '}' (they would change the hash tag), got ${JSON.stringify(chosen)}`,
    );
  }
  return chosen;
}
