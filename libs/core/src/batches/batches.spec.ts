import { describe, expect, it } from '@jest/globals';
import { forEachLimited, inBatches, progressMeter, readAhead, type SweepProgress } from './batches.js';

async function* numbers(count: number): AsyncGenerator<number> {
  for (let i = 0; i < count; i++) yield i;
}

describe('progressMeter', () => {
  it('reports at most every intervalMs, and once at the end, with the rate since the start', () => {
    let now = 1_000;
    const seen: SweepProgress[] = [];
    const meter = progressMeter((p) => seen.push(p), { intervalMs: 5_000, now: () => now, total: 30 });
    for (let i = 0; i < 30; i++) {
      now += 1_000; // one item a second
      meter.add(1);
    }
    meter.finish();
    expect(seen.map((p) => p.done)).toEqual([5, 10, 15, 20, 25, 30, 30]);
    expect(seen[0]).toEqual({ done: 5, total: 30, elapsedMs: 5_000, perSecond: 1 });
  });

  it('does nothing without a callback', () => {
    const meter = progressMeter(undefined);
    meter.add(3);
    meter.finish();
  });
});

describe('forEachLimited', () => {
  it('runs every item once, at most `concurrency` at once', async () => {
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    await forEachLimited([...Array(20).keys()], 3, async (item) => {
      peak = Math.max(peak, ++running);
      await new Promise((resolve) => setImmediate(resolve));
      done.push(item);
      running--;
    });
    expect(done.sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    expect(peak).toBe(3);
  });

  it('rejects with a work error once the others settled', async () => {
    const settled: number[] = [];
    await expect(
      forEachLimited([1, 2, 3], 3, async (item) => {
        if (item === 2) throw new Error('two');
        await new Promise((resolve) => setImmediate(resolve));
        settled.push(item);
      }),
    ).rejects.toThrow('two');
    expect(settled.sort()).toEqual([1, 3]);
  });
});

describe('inBatches', () => {
  it('yields arrays of at most `size`, the last one shorter', async () => {
    const batches: number[][] = [];
    for await (const batch of inBatches(numbers(7), 3)) batches.push(batch);
    expect(batches).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
  });
});

describe('readAhead', () => {
  /** A source that logs when each step starts and ends. */
  function logged(count: number, log: string[], failAt?: number) {
    return (async function* () {
      try {
        for (let i = 0; i < count; i++) {
          log.push(`read ${i}`);
          await new Promise((resolve) => setImmediate(resolve));
          if (i === failAt) throw new Error(`read ${i} failed`);
          yield i;
        }
      } finally {
        log.push('closed');
      }
    })();
  }

  it('reads the next item while the consumer handles the current one, one ahead at most', async () => {
    const log: string[] = [];
    for await (const item of readAhead(logged(3, log))) {
      log.push(`handle ${item} start`);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`handle ${item} end`);
    }
    expect(log).toEqual([
      'read 0',
      'read 1',
      'handle 0 start',
      'handle 0 end',
      'read 2',
      'handle 1 start',
      'handle 1 end',
      'closed', // read ahead: the source's end
      'handle 2 start',
      'handle 2 end',
    ]);
  });

  it("passes on the source's error in its place", async () => {
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const item of readAhead(logged(5, [], 2))) seen.push(item);
      })(),
    ).rejects.toThrow('read 2 failed');
    expect(seen).toEqual([0, 1]);
  });

  it('closes the source after its step in flight when the consumer stops early, even one that fails', async () => {
    const log: string[] = [];
    for await (const item of readAhead(logged(5, log, 1))) if (item === 0) break;
    expect(log).toEqual(['read 0', 'read 1', 'closed']);
  });

  it('closes a source that is not a generator only after its step in flight settled', async () => {
    const log: string[] = [];
    let i = 0;
    const source: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          const n = i++;
          await new Promise((resolve) => setImmediate(resolve));
          log.push(`read ${n}`);
          return { value: n, done: false };
        },
        return: async () => {
          log.push('closed');
          return { value: undefined, done: true };
        },
      }),
    };
    for await (const item of readAhead(source)) if (item === 0) break;
    expect(log).toEqual(['read 0', 'read 1', 'closed']);
  });
});
