import { describe, expect, it, jest } from '@jest/globals';
import { describeIdempotencyStoreContract } from '../../testing/index.js';
import { IdempotencyArgumentError, IdempotencyInProgressError } from '../../errors.js';
import { MemoryIdempotencyStore } from './memory-idempotency.store.js';

describeIdempotencyStoreContract('memory', () => ({ store: new MemoryIdempotencyStore() }));

describe('MemoryIdempotencyStore', () => {
  it('refuses options that are no positive durations', () => {
    expect(() => new MemoryIdempotencyStore({ ttlMs: 0 })).toThrow(IdempotencyArgumentError);
    expect(() => new MemoryIdempotencyStore({ leaseMs: -1 })).toThrow(IdempotencyArgumentError);
  });

  it('keeps a key whose outcome is unknown in progress for its whole lease, and frees it when the lease ends', async () => {
    // The store reads the time from Date.now(): the lease is walked through on a clock of the test's.
    let now = 1_700_000_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const store = new MemoryIdempotencyStore({ leaseMs: 60_000 });
      // A result that is no JSON value: the work ran, its outcome cannot be recorded.
      await expect(store.run({ key: 'k', fingerprint: 'f' }, async () => 1n)).rejects.toThrow(IdempotencyArgumentError);
      now += 59_999;
      let ran = false;
      await expect(store.run({ key: 'k', fingerprint: 'f' }, async () => void (ran = true))).rejects.toThrow(
        IdempotencyInProgressError,
      );
      expect(ran).toBe(false);
      now += 1;
      expect(await store.run({ key: 'k', fingerprint: 'f' }, async () => 'ran')).toEqual({
        result: 'ran',
        replayed: false,
      });
    } finally {
      clock.mockRestore();
    }
  });
});
