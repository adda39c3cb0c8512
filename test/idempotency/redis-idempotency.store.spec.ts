import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { IdempotencyInProgressError, RedisIdempotencyStore } from '@ddd-kit/idempotency';
import { describeIdempotencyStoreContract, IDEMPOTENCY_FAULTS } from '@ddd-kit/idempotency/testing';
// The completion script's SHA, to fail that one step and no other.
import { COMPLETE } from '../../libs/idempotency/src/stores/redis/redis-idempotency.scripts.js';
import {
  redisClusterIdempotencyFaults,
  redisIdempotencyFaults,
} from '../support/fault-proxy/idempotency-fault-targets.js';
import { redisClusterNodes, redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

/**
 * `client`, except that every completion of a run fails (as when its reply is lost for good); the
 * other scripts, the release after a failed work included, go through.
 */
function losingCompletions(client: Redis): Redis {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'evalsha' && property !== 'eval') return Reflect.get(target, property, receiver);
      return (script: string, ...args: unknown[]) =>
        script === COMPLETE.sha || script === COMPLETE.lua
          ? Promise.reject(new Error('the completion was lost'))
          : (target[property] as (...a: unknown[]) => Promise<unknown>)(script, ...args);
    },
  });
}

describeIdempotencyStoreContract(
  'Redis',
  async () => {
    const redis = new Redis(redisUrl());
    const prefix = `${uniqueName('idem_contract')}:`;
    const injector = await redisIdempotencyFaults(redisUrl(), prefix);
    return {
      store: new RedisIdempotencyStore(redis, { keyPrefix: prefix }),
      faults: injector.faults,
      close: async () => {
        await injector.close();
        await redis.quit();
      },
    };
  },
  { faults: IDEMPOTENCY_FAULTS },
);

describeIdempotencyStoreContract(
  'Redis Cluster',
  async () => {
    const cluster = new Cluster(redisClusterNodes());
    const prefix = `${uniqueName('idem_contract')}:`;
    const injector = await redisClusterIdempotencyFaults(redisClusterNodes(), prefix);
    return {
      store: new RedisIdempotencyStore(cluster, { keyPrefix: prefix }),
      faults: injector.faults,
      close: async () => {
        await injector.close();
        await cluster.quit();
      },
    };
  },
  { faults: IDEMPOTENCY_FAULTS },
);

describe('RedisIdempotencyStore on one Redis', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(redisUrl());
  });

  afterAll(async () => {
    await redis.quit();
  });

  it('keeps one hash a key that Redis drops itself: the lease while in progress, the ttl once done', async () => {
    const prefix = `${uniqueName('idem_layout')}:`;
    const store = new RedisIdempotencyStore(redis, { keyPrefix: prefix, leaseMs: 30_000 });
    let during: [string, number] | undefined;
    await store.run({ key: 'k', fingerprint: 'f', ttlMs: 600_000 }, async () => {
      during = [(await redis.hget(`${prefix}k`, 's'))!, await redis.pttl(`${prefix}k`)];
      return { ok: true };
    });
    expect(during![0]).toBe('p');
    expect(during![1]).toBeGreaterThan(0);
    expect(during![1]).toBeLessThanOrEqual(30_000);
    expect(await redis.hget(`${prefix}k`, 's')).toBe('d');
    expect(await redis.pttl(`${prefix}k`)).toBeGreaterThan(30_000);
    expect(await redis.hget(`${prefix}k`, 'f')).not.toContain('f'.repeat(2));
  });

  /** A run whose work succeeded and whose completion failed: the result cannot be recorded. */
  async function completionLost(prefix: string, leaseMs: number, work: () => void): Promise<void> {
    const store = new RedisIdempotencyStore(losingCompletions(redis), { keyPrefix: prefix, leaseMs });
    await expect(
      store.run({ key: 'k', fingerprint: 'f' }, async () => {
        work();
        return 1;
      }),
    ).rejects.toThrow('the completion was lost');
  }

  it('leaves a key whose completion failed in progress for its lease, never running it twice meanwhile', async () => {
    const prefix = `${uniqueName('idem_lease')}:`;
    // A lease far longer than the test: "still in progress" cannot turn true by the clock.
    let calls = 0;
    await completionLost(prefix, 60_000, () => void calls++);
    const store = new RedisIdempotencyStore(redis, { keyPrefix: prefix, leaseMs: 60_000 });
    await expect(store.run({ key: 'k', fingerprint: 'f' }, async () => ++calls)).rejects.toThrow(
      IdempotencyInProgressError,
    );
    expect(calls).toBe(1);
    // Redis drops the record when the lease ends (the store set it to expire with the lease).
    expect(await redis.hget(`${prefix}k`, 's')).toBe('p');
    const pttl = await redis.pttl(`${prefix}k`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);
  });

  it('frees a key whose completion failed once its lease ended (Redis expires it), running the work again', async () => {
    const prefix = `${uniqueName('idem_lease_end')}:`;
    // Only Redis's clock ends the lease: a short one, waited for; nothing asserted here can turn
    // false by waiting longer.
    let calls = 0;
    await completionLost(prefix, 200, () => void calls++);
    const store = new RedisIdempotencyStore(redis, { keyPrefix: prefix, leaseMs: 200 });
    const outcome = await waitFor('the key to come free once its lease ended', () =>
      store.run({ key: 'k', fingerprint: 'f' }, async () => ++calls),
    );
    expect(outcome).toEqual({ result: 2, replayed: false });
    expect(calls).toBe(2);
  });

  it('a repeat while the first runs is in progress, from another client as from the same', async () => {
    const prefix = `${uniqueName('idem_two')}:`;
    const other = new Redis(redisUrl());
    try {
      const a = new RedisIdempotencyStore(redis, { keyPrefix: prefix });
      const b = new RedisIdempotencyStore(other, { keyPrefix: prefix });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const working = new Promise<void>((resolve) => (started = resolve));
      const first = a.run({ key: 'k', fingerprint: 'f' }, () => (started(), gate.then(() => 'a')));
      await waitFor('the first run to start its work', working);
      await expect(b.run({ key: 'k', fingerprint: 'f' }, async () => 'b')).rejects.toThrow(IdempotencyInProgressError);
      release();
      expect(await first).toEqual({ result: 'a', replayed: false });
      expect(await b.run({ key: 'k', fingerprint: 'f' }, async () => 'b')).toEqual({ result: 'a', replayed: true });
    } finally {
      await other.quit();
    }
  });
});
