import { Logger } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import { warnWithoutCommandTimeout } from '@ddd-kit/core/redis';
import { DEFAULT_OPERATION_TIMEOUT_MS, operationTimeoutProblem } from '@ddd-kit/core/internal';
import { PrepareKeyArgumentError } from '../../errors.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PrepareKeyFactory } from '../../prepare-key.factory.js';
import { assertName } from '../../prepare-key.validation.js';
import { DEFAULT_REDIS_KEY_PREFIX, DEFAULT_REDIS_RETENTION_MS } from './redis-prepare-key.constants.js';
import type { RedisPrepareKeyFactoryOptions } from './redis-prepare-key.interfaces.js';
import { RedisKeyScanner } from './redis-key-scanner.js';
import { pingRedis } from './redis-prepare-key.utils.js';
import { RedisPrepareKey, type RedisPrepareKeyContext } from './redis-prepare-key.js';
import { ServerClock } from '../../server-clock.js';
import { RedisSeals } from './redis-seals.js';

const logger = new Logger('PrepareKey');

/**
 * PrepareKeys on Redis (a single node or a Cluster) through an ioredis client, shared by every
 * instance of an application. Each operation is atomic on one record key
 * `<keyPrefix>{<name>:<key>}` (a Lua script, or for `prepare` first a native `SET … NX GET`);
 * expiry is decided by the Redis server's clock; an expired record
 * stays readable by `getValue` for `retentionMs`, then Redis drops it by itself.
 *
 * Redis can lose its data (no persistence, a flush, a failover to an empty node or shard): every
 * operation checks a seal in the same script, rejects with PrepareKeyDataLostError when it is
 * missing, and the reservations are restored (`restoreWith`) before the store is sealed again
 * (see RedisSeals).
 *
 * The client stays the caller's: the factory neither connects nor closes it. Set
 * `enableAutoPipelining: true` on it when many callers run at once (see the README).
 */
export class RedisPrepareKeyFactory extends PrepareKeyFactory {
  private readonly context: RedisPrepareKeyContext;
  private readonly sealed: boolean;

  constructor(client: Redis | Cluster, options: RedisPrepareKeyFactoryOptions = {}) {
    super();
    if (typeof (client as Partial<Redis> | undefined)?.evalsha !== 'function') {
      throw new PrepareKeyArgumentError(
        'RedisPrepareKeyFactory: pass an ioredis client, `new Redis(url)` or `new Cluster(nodes)`',
      );
    }
    const { keyPrefix, retentionMs, operationTimeoutMs } = checkRedisPrepareKeyFactoryOptions(options);
    warnWithoutCommandTimeout(client, new Logger('PrepareKeyModule'), 'RedisPrepareKeyFactory');
    if (options.seal !== undefined && typeof options.seal !== 'boolean') {
      throw new PrepareKeyArgumentError(
        `RedisPrepareKeyFactory: seal must be true or false, got ${String(options.seal)}`,
      );
    }
    this.sealed = options.seal ?? true;
    this.context = {
      client,
      keyPrefix,
      retentionMs,
      operationTimeoutMs,
      clock: new ServerClock(),
      scanner: new RedisKeyScanner(client),
      setNxGet: true,
      seals: new RedisSeals(client, keyPrefix, () => this.restoreAll(), operationTimeoutMs),
    };
  }

  /** Restores and seals the store unless it is sealed (see RedisSeals). */
  override async restoreIfLost(): Promise<void> {
    if (this.sealed) await this.context.seals.ensure();
  }

  /** Runs every key's restorer, each on a key that writes into the unsealed store. */
  private async restoreAll(): Promise<void> {
    const restorers = this.givenRestorers();
    if (restorers.size === 0)
      logger.log(`no restorer given to the factory under '${this.context.keyPrefix}': sealing it as it is`);
    for (const [name, restorer] of restorers) await restorer(new RedisPrepareKey(name, this.context, false));
  }

  create<V = unknown>(name: string): PrepareKey<V> {
    assertName(name);
    return new RedisPrepareKey<V>(name, this.context, this.sealed);
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
