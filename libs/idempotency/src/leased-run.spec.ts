import { describe, expect, it } from '@jest/globals';
import { OperationTimeoutError } from '@ddd-kit/core';
import { runLeased, type LeasedRecords } from './leased-run.js';

const TIMES = { ttlMs: 60_000, leaseMs: 60_000 };

/** Records whose store took the key, then failed every completion with `failure`. */
function recordsFailingCompletion(failure: unknown): LeasedRecords & { completions: number } {
  const records = {
    completions: 0,
    begin: async () => ({ state: 'acquired' as const }),
    complete: async () => {
      records.completions++;
      throw failure;
    },
    release: async () => undefined,
  };
  return records;
}

describe('completing a run whose work succeeded', () => {
  it('is not retried once the store missed its deadline (each retry would wait as long again)', async () => {
    const timeout = new OperationTimeoutError('Redis idempotency complete', 2_000);
    const records = recordsFailingCompletion(timeout);
    await expect(runLeased(records, { key: 'k', fingerprint: 'f' }, async () => 'done', TIMES)).rejects.toBe(timeout);
    expect(records.completions).toBe(1);
  });

  it('is retried after another failure (a reply lost on the way), up to three attempts', async () => {
    const lost = new Error('Connection is closed.');
    const records = recordsFailingCompletion(lost);
    await expect(runLeased(records, { key: 'k', fingerprint: 'f' }, async () => 'done', TIMES)).rejects.toBe(lost);
    expect(records.completions).toBe(3);
  });
});
