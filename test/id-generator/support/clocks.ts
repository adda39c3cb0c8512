// A holder's clocks moved by hand, and a watch on a distributor's heartbeats: a lease then ends
// exactly when a test says, never because a loaded machine sent a heartbeat late.
import type { MachineIdDistributor } from '@ddd-kit/id-generator';

/** Wall and monotonic clock of one process; `advance(ms)` is time passing. Nothing moves otherwise. */
export class ManualClocks {
  wallMs: number;
  monotonicMs = 0;
  constructor(start = Date.now()) {
    this.wallMs = start;
  }
  readonly now = (): number => this.wallMs;
  readonly monotonic = (): number => this.monotonicMs;
  /** `{ clock, monotonic }` for MachineIdHolder.acquire. */
  get holderClocks(): { clock: () => number; monotonic: () => number } {
    return { clock: this.now, monotonic: this.monotonic };
  }
  advance(ms: number): void {
    this.wallMs += ms;
    this.monotonicMs += ms;
  }
}

/**
 * Counts a distributor's successful heartbeats (guards) by the monotonic reading they were sent
 * at. `sentSince(t)` resolves once one sent at `t` or later succeeded and the holder has taken its
 * answer in (its lease renewed from then).
 */
export function heartbeatsOf(
  distributor: MachineIdDistributor,
  clocks: ManualClocks,
): { count(): number; sentSince(monotonicMs: number): Promise<void> } {
  const succeeded: number[] = [];
  const waiting = new Set<{ from: number; resolve: () => void }>();
  const guard = distributor.guard.bind(distributor);
  distributor.guard = async (state) => {
    const sentAt = clocks.monotonic();
    await guard(state);
    succeeded.push(sentAt);
    // The holder renews its lease once this call has returned: wake the test a turn later.
    setImmediate(() => {
      for (const w of waiting) {
        if (sentAt < w.from) continue;
        waiting.delete(w);
        w.resolve();
      }
    });
  };
  return {
    count: () => succeeded.length,
    sentSince: (from) =>
      succeeded.some((sentAt) => sentAt >= from)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.add({ from, resolve })),
  };
}
