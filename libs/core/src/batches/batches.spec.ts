import { describe, expect, it } from '@jest/globals';
import { forEachLimited, inBatches, progressMeter, type SweepProgress } from './batches.js';

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
