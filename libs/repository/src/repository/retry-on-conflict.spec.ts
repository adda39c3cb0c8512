import { describe, expect, it } from '@jest/globals';
import { OptimisticLockError } from '../errors.js';
import { retryOnConflict } from './retry-on-conflict.js';

const conflict = () => new OptimisticLockError('Counter', 'c', 1);

describe('retryOnConflict', () => {
  it('runs the command again after conflicts and returns its result', async () => {
    const attempts: number[] = [];
    const seen: number[] = [];
    const result = await retryOnConflict(
      async (attempt) => {
        attempts.push(attempt);
        if (attempt < 3) throw conflict();
        return 'done';
      },
      { attempts: 5, backoff: 0, onConflict: (_e, attempt) => void seen.push(attempt) },
    );
    expect(result).toBe('done');
    expect(attempts).toEqual([1, 2, 3]);
    expect(seen).toEqual([1, 2]);
  });

  it('gives up after `attempts` runs with the last conflict', async () => {
    let runs = 0;
    const last = conflict();
    await expect(
      retryOnConflict(
        async () => {
          runs++;
          throw runs === 4 ? last : conflict();
        },
        { attempts: 4, backoff: 0 },
      ),
    ).rejects.toBe(last);
    expect(runs).toBe(4);
  });

  it('does not retry other errors', async () => {
    let runs = 0;
    await expect(
      retryOnConflict(async () => {
        runs++;
        throw new Error('validation failed');
      }),
    ).rejects.toThrow('validation failed');
    expect(runs).toBe(1);
  });

  it('waits the backoff between attempts', async () => {
    const waits: number[] = [];
    const order: string[] = [];
    // Timers set now, due just before the end of each wait: Node runs timers in the order they
    // fall due, so each comes before the attempt that follows a whole wait (no clock is read).
    const marks = [19, 39].map((ms) => setTimeout(() => order.push(`${ms} ms`), ms));
    try {
      await retryOnConflict(
        async (attempt) => {
          order.push(`attempt ${attempt}`);
          if (attempt < 3) throw conflict();
        },
        { backoff: (n) => (waits.push(n), 20) },
      );
    } finally {
      marks.forEach(clearTimeout);
    }
    expect(waits).toEqual([1, 2]);
    expect(order).toEqual(['attempt 1', '19 ms', 'attempt 2', '39 ms', 'attempt 3']);
  });

  it('refuses a non-positive or fractional attempts', async () => {
    for (const attempts of [0, -1, 1.5, Number.NaN]) {
      await expect(retryOnConflict(async () => 1, { attempts })).rejects.toBeInstanceOf(RangeError);
    }
  });
});
