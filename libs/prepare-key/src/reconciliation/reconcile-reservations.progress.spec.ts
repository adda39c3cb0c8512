import { describe, expect, it } from '@jest/globals';
import type { SweepProgress } from '@ddd-kit/core';
import { MemoryPrepareKeyFactory } from '../backends/memory/memory-prepare-key.factory.js';
import { reconcileReservations } from './reconcile-reservations.js';

describe('reconcileReservations progress', () => {
  it('reports the records done and the rate at most every progressIntervalMs, and once at the end', async () => {
    const pk = new MemoryPrepareKeyFactory().create<{ owner: string }>('username');
    for (let i = 0; i < 10; i++) await pk.prepare(`k${i}`, { owner: `o${i}` });
    let now = 0;
    const seen: SweepProgress[] = [];
    const report = await reconcileReservations(
      pk,
      () => {
        now += 1_000; // each check takes a second on this clock
        return true;
      },
      { now: () => now, concurrency: 1, onProgress: (p) => seen.push(p), progressIntervalMs: 3_000 },
    );
    expect(report.live).toBe(10);
    expect(seen.map((p) => p.done)).toEqual([3, 6, 9, 10]);
    expect(seen.at(-1)).toEqual({ done: 10, elapsedMs: 10_000, perSecond: 1 });
  });
});
