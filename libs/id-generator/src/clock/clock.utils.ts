import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import type { Clock, ClockLike } from '../id-generator.interfaces.js';

/** Real time for spin limits: monotonic, unaffected by the (possibly injected) ID clock. */
export const monotonicNow: () => number = () => performance.now();

/**
 * The longest a generator busy-waits for the next millisecond once a millisecond's sequence
 * is used up. A real clock gets there in under 1 ms; only an injected clock that stands still
 * reaches this limit.
 */
export const NEXT_TICK_SPIN_LIMIT_MS = 20;

export function toClock(clock: ClockLike | undefined): Clock {
  if (clock === undefined) return Date.now;
  if (typeof clock === 'function') return clock;
  if (clock && typeof clock.now === 'function') return () => clock.now();
  throw new IdGeneratorOptionsError('clock must be a function returning epoch milliseconds, or an object with now()');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.ceil(ms))));
}
