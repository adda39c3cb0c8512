import { describe, expect, it } from '@jest/globals';
import { describeIdempotencyStoreContract } from '../../testing/index.js';
import { IdempotencyArgumentError } from '../../errors/idempotency-argument.error.js';
import { MemoryIdempotencyStore } from './memory-idempotency.store.js';

describeIdempotencyStoreContract('memory', () => ({ store: new MemoryIdempotencyStore() }));

describe('MemoryIdempotencyStore', () => {
  it('refuses options that are no positive durations', () => {
    expect(() => new MemoryIdempotencyStore({ ttlMs: 0 })).toThrow(IdempotencyArgumentError);
    expect(() => new MemoryIdempotencyStore({ leaseMs: -1 })).toThrow(IdempotencyArgumentError);
  });

  it('frees a key whose outcome is unknown once its lease ends', async () => {
    const store = new MemoryIdempotencyStore({ leaseMs: 200 });
    await expect(store.run({ key: 'k', fingerprint: 'f' }, async () => 1n)).rejects.toThrow(IdempotencyArgumentError);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const outcome = await store.run({ key: 'k', fingerprint: 'f' }, async () => 'ran').catch(() => undefined);
      if (outcome !== undefined) {
        expect(outcome).toEqual({ result: 'ran', replayed: false });
        break;
      }
      if (Date.now() > deadline) throw new Error('the lease did not end');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
