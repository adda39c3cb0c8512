import type { Cluster, Redis } from 'ioredis';
import { PrepareKeyArgumentError } from '../../errors/prepare-key-argument.error.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PrepareKeyFactory } from '../../prepare-key.factory.js';
import { assertName } from '../../prepare-key.validation.js';
import { DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_RETENTION_MS } from './redis-prepare-key.constants.js';
import type { RedisPrepareKeyFactoryOptions } from './redis-prepare-key.interfaces.js';
import { RedisKeyScanner } from './redis-key-scanner.js';
import { pingRedis } from './redis-prepare-key.utils.js';
import { RedisPrepareKey, type RedisPrepareKeyContext } from './redis-prepare-key.js';
import { ServerClock } from '../../server-clock.js';

/**
 * PrepareKeys on Redis (a single node or a Cluster) through an ioredis client, shared by every
 * instance of an application. Each operation is one atomic Lua script on one record key
 * `<prefix>:{<name>:<key>}`; expiry is decided by the Redis server's clock; an expired record
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
    const { prefix = DEFAULT_REDIS_PREFIX, retentionMs = DEFAULT_REDIS_RETENTION_MS } = options;
    if (typeof prefix !== 'string' || prefix.length === 0 || /[{}]/.test(prefix)) {
      throw new PrepareKeyArgumentError(
        `RedisPrepareKeyFactory: prefix must be a non-empty string without '{' or '}' (they would change the hash tag), got ${JSON.stringify(prefix)}`,
      );
    }
    if (retentionMs !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(retentionMs) && retentionMs >= 0)) {
      throw new PrepareKeyArgumentError(
        `RedisPrepareKeyFactory: retentionMs must be a non-negative integer number of milliseconds (or Infinity), got ${String(retentionMs)}`,
      );
    }
    this.context = { client, prefix, retentionMs, clock: new ServerClock(), scanner: new RedisKeyScanner(client) };
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
