import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import {
  redisClusterIdempotencyFaults,
  redisIdempotencyFaults,
} from '../../../../../test/support/fault-proxy/idempotency-fault-targets.js';
import { redisClusterNodes, redisUrl, uniqueName } from '../../../../../test/support/servers.js';
import { IdempotencyArgumentError } from '../../errors/idempotency-argument.error.js';
import { IdempotencyInProgressError } from '../../errors/idempotency-in-progress.error.js';
import { describeIdempotencyStoreContract, IDEMPOTENCY_FAULTS } from '../../testing/index.js';
import { RedisIdempotencyStore } from './redis-idempotency.store.js';

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

  it('refuses what is not an ioredis client, and bad options', () => {
    expect(() => new RedisIdempotencyStore({} as Redis)).toThrow(IdempotencyArgumentError);
    expect(() => new RedisIdempotencyStore(redis, { leaseMs: 0 })).toThrow(IdempotencyArgumentError);
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

  it('leaves a key whose completion failed in progress until its lease ends, never running it twice meanwhile', async () => {
    const prefix = `${uniqueName('idem_lease')}:`;
    const store = new RedisIdempotencyStore(redis, { keyPrefix: prefix, leaseMs: 500 });
    let calls = 0;
    // The completion's script fails on the server (the record turned into another type under it).
    await expect(
      store.run({ key: 'k', fingerprint: 'f' }, async () => {
        calls++;
        await redis.del(`${prefix}k`);
        await redis.set(`${prefix}k`, 'not a hash', 'PX', 500);
        return 1;
      }),
    ).rejects.toThrow(/WRONGTYPE/);
    await expect(store.run({ key: 'k', fingerprint: 'f' }, async () => ++calls)).rejects.toThrow();
    expect(calls).toBe(1);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const outcome = await store.run({ key: 'k', fingerprint: 'f' }, async () => ++calls).catch(() => undefined);
      if (outcome !== undefined) {
        expect(outcome).toEqual({ result: 2, replayed: false });
        break;
      }
      if (Date.now() > deadline) throw new Error('the key never came free');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('a repeat while the first runs is in progress, from another client as from the same', async () => {
    const prefix = `${uniqueName('idem_two')}:`;
    const other = new Redis(redisUrl());
    try {
      const a = new RedisIdempotencyStore(redis, { keyPrefix: prefix });
      const b = new RedisIdempotencyStore(other, { keyPrefix: prefix });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const first = a.run({ key: 'k', fingerprint: 'f' }, () => gate.then(() => 'a'));
      const deadline = Date.now() + 20_000;
      while ((await redis.exists(`${prefix}k`)) === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      await expect(b.run({ key: 'k', fingerprint: 'f' }, async () => 'b')).rejects.toThrow(IdempotencyInProgressError);
      release();
      expect(await first).toEqual({ result: 'a', replayed: false });
      expect(await b.run({ key: 'k', fingerprint: 'f' }, async () => 'b')).toEqual({ result: 'a', replayed: true });
    } finally {
      await other.quit();
    }
  });
});
