import { forEachLimited, inBatches, progressMeter, readAhead } from '@ddd-kit/core/internal';
import { PrepareKeyArgumentError } from '../errors.js';
import type { PrepareKey } from '../prepare-key.js';
import type { PreparedRecord } from '../prepare-key.interfaces.js';
import type {
  ReconcileReservationsOptions,
  ReservationsReconciliationReport,
  ReservationLiveness,
  ReservationPageLiveness,
} from './reconcile-reservations.interfaces.js';

const DEFAULT_CONCURRENCY = 16;
/** records()' own default page size. */
const DEFAULT_PAGE_SIZE = 500;

/**
 * Releases the reservations whose owner is gone: walks every record of `prepareKey` page by
 * page (works on every backend) and, for each one that `isLive(key, value)` denies, calls the
 * conditional `rollback(key, valueItSaw)`. A record re-prepared meanwhile by another owner
 * holds another value, so that rollback leaves it alone (counted as `skipped`). Safe to run
 * on a live system and to run again: it only ever deletes what it judged dead, as it saw it.
 *
 * Use it after crashes between the two steps of a key change, or when permanent reservations
 * must be cleaned up after failed commands (see the README).
 *
 * `{ areLive }` instead of `isLive` asks about a page of records at once (one query of the write
 * model per page rather than one per record); the report is the same.
 */
export async function reconcileReservations<V>(
  prepareKey: PrepareKey<V>,
  isLive: ReservationLiveness<V> | { areLive: ReservationPageLiveness<V> },
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
  const areLive = typeof isLive === 'object' && isLive !== null ? isLive.areLive : undefined;
  if (typeof isLive !== 'function' && typeof areLive !== 'function')
    throw new PrepareKeyArgumentError('reconcileReservations: isLive must be a function, or { areLive } one');
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

  /** Counts an expired record that is left alone; true when it is. */
  const leftExpired = ({ value: prepared }: PreparedRecord<V>): boolean => {
    if (includeExpired || !prepared.isExpired(now())) return false;
    report.expired++;
    return true;
  };

  /** Releases (or counts) a record by the answer `live` about its owner. */
  const judge = async ({ key, value: prepared }: PreparedRecord<V>, live: unknown): Promise<void> => {
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

  const records = prepareKey.records(pageSize === undefined ? {} : { pageSize });
  if (areLive !== undefined) {
    // A page at a time, the next one listed while this one is asked about and released.
    for await (const page of readAhead(inBatches(records, pageSize ?? DEFAULT_PAGE_SIZE))) {
      report.scanned += page.length;
      const judged = page.filter((record) => !leftExpired(record));
      let answers: ReadonlyArray<unknown> | undefined;
      let failure: unknown;
      try {
        answers = judged.length === 0 ? [] : await areLive(judged);
        if (!Array.isArray(answers) || answers.length !== judged.length)
          failure = new TypeError(`areLive gave ${describeAnswers(answers)} for ${judged.length} records`);
      } catch (error) {
        failure = error;
      }
      if (failure !== undefined) for (const record of judged) fail(failure, record.key);
      else await forEachLimited(judged, concurrency, (record, i) => judge(record, answers![i]));
      progress.add(page.length);
    }
    progress.finish();
    return report;
  }

  const settle = async (record: PreparedRecord<V>): Promise<void> => {
    if (leftExpired(record)) return;
    let live: unknown;
    try {
      live = await (isLive as ReservationLiveness<V>)(record.key, record.value.value, record.value);
    } catch (error) {
      return fail(error, record.key);
    }
    return judge(record, live);
  };

  // Workers share one iterator: an async generator queues concurrent next() calls, so each
  // record is handed to exactly one worker and pages are fetched as they are needed.
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

function describeAnswers(answers: unknown): string {
  return Array.isArray(answers) ? `${answers.length} answers` : String(answers);
}
