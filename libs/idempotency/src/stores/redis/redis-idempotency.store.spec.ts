// The store against a real Redis (and a Cluster, under faults): test/idempotency/redis-idempotency.store.spec.ts.
import { describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { IdempotencyArgumentError } from '../../errors.js';
import { RedisIdempotencyStore } from './redis-idempotency.store.js';

describe('RedisIdempotencyStore options', () => {
  it('refuses what is not an ioredis client, and bad options', () => {
    // Never connected: the constructor only checks what it is given.
    const client = { evalsha: () => undefined } as unknown as Redis;
    expect(() => new RedisIdempotencyStore({} as Redis)).toThrow(IdempotencyArgumentError);
    expect(() => new RedisIdempotencyStore(client, { leaseMs: 0 })).toThrow(IdempotencyArgumentError);
    expect(() => new RedisIdempotencyStore(client, { ttlMs: 1.5 })).toThrow(IdempotencyArgumentError);
    expect(() => new RedisIdempotencyStore(client, { keyPrefix: 1 as never })).toThrow(IdempotencyArgumentError);
    expect(new RedisIdempotencyStore(client, { keyPrefix: 'app:' }).recordKey('k')).toBe('app:k');
  });
});
