import { progressMeter } from '@ddd-kit/core/internal';
import { PrepareKeyArgumentError } from '../errors.js';
import type { PrepareKey } from '../prepare-key.js';
import type { PreparedRecord } from '../prepare-key.interfaces.js';
import type {
  ReconcileReservationsOptions,
  ReservationsReconciliationReport,
  ReservationLiveness,
} from './reconcile-reservations.interfaces.js';

const DEFAULT_CONCURRENCY = 16;

/**
 * Releases the reservations whose owner is gone: walks every record of `prepareKey` page by
 * page (works on every backend) and, for each one that `isLive(key, value)` denies, calls the
 * conditional `rollback(key, valueItSaw)`. A record re-prepared meanwhile by another owner
 * holds another value, so that rollback leaves it alone (counted as `skipped`). Safe to run
 * on a live system and to run again: it only ever deletes what it judged dead, as it saw it.
 *
 * Use it after crashes between the two steps of a key change, or when permanent reservations
 * must be cleaned up after failed commands (see the README).
 */
export async function reconcileReservations<V>(
  prepareKey: PrepareKey<V>,
  isLive: ReservationLiveness<V>,
  options: ReconcileReservationsOptions = {},
): Promise<ReservationsReconciliationReport> {
  const {
    pageSize,
    concurrency = DEFAULT_CONCURRENCY,
    dryRun = false,
    includeExpired = false,
    now = Date.now,
    onError,
    onProgress,
    progressIntervalMs,
  } = options;
  if (typeof isLive !== 'function')
    throw new PrepareKeyArgumentError('reconcileReservations: isLive must be a function');
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new PrepareKeyArgumentError(
      `reconcileReservations: concurrency must be a positive integer, got ${String(concurrency)}`,
    );
  }
  const report: ReservationsReconciliationReport = {
    scanned: 0,
    expired: 0,
    live: 0,
    released: 0,
    skipped: 0,
    failed: 0,
  };

  const progress = progressMeter(onProgress, { intervalMs: progressIntervalMs, now });

  const fail = (error: unknown, key: string): void => {
    report.failed++;
    onError?.(error, key);
  };

  const settle = async ({ key, value: prepared }: PreparedRecord<V>): Promise<void> => {
    if (!includeExpired && prepared.isExpired(now())) {
      report.expired++;
      return;
    }
    let live: unknown;
    try {
      live = await isLive(key, prepared.value, prepared);
    } catch (error) {
      return fail(error, key);
    }
    if (live === true) {
      report.live++;
      return;
    }
    // Anything but an explicit false is a bug in isLive, never a reason to delete.
    if (live !== false) return fail(new TypeError(`isLive('${key}') returned ${String(live)}, not a boolean`), key);
    if (dryRun) {
      report.released++;
      return;
    }
    try {
      if (await prepareKey.rollback(key, prepared.value)) report.released++;
      else report.skipped++;
    } catch (error) {
      fail(error, key);
    }
  };

  // Workers share one iterator: an async generator queues concurrent next() calls, so each
  // record is handed to exactly one worker and pages are fetched as they are needed.
  const records = prepareKey.records(pageSize === undefined ? {} : { pageSize });
  const worker = async (): Promise<void> => {
    for (let next = await records.next(); !next.done; next = await records.next()) {
      report.scanned++;
      await settle(next.value);
      progress.add(1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  progress.finish();
  return report;
}
