import { IdGeneratorOptionsError, InvalidClockReadingError } from '../errors.js';
import type { Clock, ClockLike } from '../id-generator.interfaces.js';

/** Real time for spin limits: monotonic, unaffected by the (possibly injected) ID clock. */
export const monotonicNow: () => number = () => performance.now();

/**
 * The longest a generator busy-waits for the next millisecond once a millisecond's sequence
 * is used up. A real clock gets there in under 1 ms; only an injected clock that stands still
 * reaches this limit.
 */
export const NEXT_TICK_SPIN_LIMIT_MS = 20;

/**
 * Once a millisecond's sequence has been used up (a burst), a generator enters consecutive
 * milliseconds, each only once the clock has reached it, instead of jumping to the clock: a
 * pause of the process (GC, CPU throttling) then costs no sequence space. It jumps to the clock
 * when it is more than this far behind. IDs never carry a time ahead of the clock; during and
 * shortly after a burst they may trail it by up to this much.
 */
export const CATCH_UP_LIMIT_MS = 50;

/**
 * How many further IDs may reuse one reading of the default clock inside one synchronous run.
 * Reading it (`Date.now()`, ~40 ns) costs more than building an ID; reusing a reading keeps the
 * generators several times faster than `crypto.randomUUID()`. (An injected clock is read for
 * every ID unless `clockReadingReuse` says otherwise.) A reading is dropped when the
 * current synchronous run ends (a queued microtask), so an ID issued after any await or in a
 * later event reads the clock afresh; inside one run an ID carries the reading taken at most
 * this many IDs before it. Uniqueness and order do not depend on it.
 */
export const CLOCK_READING_REUSE = 7;

export function toClock(clock: ClockLike | undefined): Clock {
  if (clock === undefined) return Date.now;
  if (typeof clock === 'function') return clock;
  if (clock && typeof clock.now === 'function') return () => clock.now();
  throw new IdGeneratorOptionsError('clock must be a function returning epoch milliseconds, or an object with now()');
}

/** The global timer, not node:timers/promises, so that a test's fake timers drive the wait. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.ceil(ms))));
}

/** A clock reading as integer epoch milliseconds, or InvalidClockReadingError: never encode anything else. */
export function checkReading(now: number): number {
  if (Number.isSafeInteger(now) && now >= 0) return now;
  throw new InvalidClockReadingError(now);
}
