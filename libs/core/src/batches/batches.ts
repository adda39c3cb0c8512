/**
 * What a long sweep (a reconciliation) tells its caller as it goes: the items done, the total
 * when it is known beforehand, and the rate since the start.
 */
export interface SweepProgress {
  /** Items handled so far. */
  done: number;
  /** Items to handle in all, when known beforehand. */
  total?: number;
  /** Milliseconds since the sweep started. */
  elapsedMs: number;
  /** Items per second since the start. */
  perSecond: number;
}

/** Calls `report` at most every `intervalMs` (and once at the end, through `finish`). */
export interface ProgressMeter {
  add(count: number): void;
  finish(): void;
}

const NO_METER: ProgressMeter = { add: () => {}, finish: () => {} };

/**
 * A meter for `report`, or one that does nothing without it. Reports at most every `intervalMs`
 * so that a callback that logs does not flood the log on a sweep of millions.
 */
export function progressMeter(
  report: ((progress: SweepProgress) => void) | undefined,
  { intervalMs = 5_000, now = Date.now, total }: { intervalMs?: number; now?: () => number; total?: number } = {},
): ProgressMeter {
  if (report === undefined) return NO_METER;
  const start = now();
  let done = 0;
  let last = start;
  const emit = (at: number): void => {
    const elapsedMs = at - start;
    const perSecond = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
    report(total === undefined ? { done, elapsedMs, perSecond } : { done, total, elapsedMs, perSecond });
  };
  return {
    add(count) {
      done += count;
      const at = now();
      if (at - last >= intervalMs) {
        last = at;
        emit(at);
      }
    },
    finish: () => emit(now()),
  };
}

/**
 * Runs `work` on every item, at most `concurrency` at once; resolves when all settled. `work`
 * handles its own errors (a rejection here rejects the whole run, after the others settled).
 */
export async function forEachLimited<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await work(items[index], index);
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  for (const result of results) if (result.status === 'rejected') throw result.reason;
}

/**
 * The items of `source` in arrays of at most `size`: a sweep reads a page, handles it as a set,
 * and holds no more than one page at a time.
 */
export async function* inBatches<T>(source: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of source) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * The items of `source`, the next one asked for as soon as the current one is handed out: a
 * sweep reads its next page while it compares the current one, so the round trips overlap the
 * work. Holds at most one item ahead. When the consumer stops early, the step in flight is
 * awaited (its error ignored) and the source closed.
 */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let next = iterator.next();
  let finished = false;
  try {
    for (;;) {
      const result = await next;
      if (result.done) {
        finished = true;
        return;
      }
      next = iterator.next();
      next.catch(() => {}); // awaited above on the next turn; ignored only if the consumer stops first
      yield result.value;
    }
  } catch (error) {
    finished = true; // the source failed: it is closed already
    throw error;
  } finally {
    if (!finished) {
      await next.catch(() => {});
      await iterator.return?.();
    }
  }
}
