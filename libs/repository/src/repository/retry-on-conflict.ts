import { setTimeout as sleep } from 'node:timers/promises';
import { OptimisticLockError } from '../errors.js';

export interface RetryOnConflictOptions {
  /** How many times `command` runs at most (≥ 1). Default 5. */
  attempts?: number;
  /**
   * Milliseconds to wait before attempt `n + 1` after `n` conflicts. Default: a random wait
   * between 0 and min(2^n, 100) ms ("full jitter"), which spreads out writers that keep
   * colliding on one aggregate. Pass 0 to retry at once.
   */
  backoff?: number | ((conflicts: number) => number);
  /** Called after each conflict that will be retried. */
  onConflict?: (error: OptimisticLockError, attempt: number) => void;
}

/**
 * Runs `command` and runs it again when it fails with OptimisticLockError, up to `attempts`
 * times; any other error, and the last conflict, propagate. `command` must reload the
 * aggregate each time (findById → change → update): replaying on the stale instance would
 * just conflict again. The repository itself never retries; this is the opt-in.
 *
 *   await retryOnConflict(async () => {
 *     const account = await accounts.findById(id);
 *     account.deposit(10);
 *     await accounts.update(account);
 *   }, { attempts: 10 });
 */
export async function retryOnConflict<R>(
  command: (attempt: number) => Promise<R>,
  options: RetryOnConflictOptions = {},
): Promise<R> {
  const attempts = options.attempts ?? 5;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new RangeError(`retryOnConflict: attempts must be an integer ≥ 1, got ${String(attempts)}`);
  }
  const backoff = options.backoff ?? defaultBackoff;
  for (let attempt = 1; ; attempt++) {
    try {
      return await command(attempt);
    } catch (error) {
      if (!(error instanceof OptimisticLockError) || attempt >= attempts) throw error;
      options.onConflict?.(error, attempt);
      const wait = typeof backoff === 'number' ? backoff : backoff(attempt);
      if (wait > 0) await sleep(wait);
    }
  }
}

function defaultBackoff(conflicts: number): number {
  return Math.random() * Math.min(2 ** conflicts, 100);
}
