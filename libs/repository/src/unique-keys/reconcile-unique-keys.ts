import { Logger } from '@nestjs/common';
import type { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import { progressMeter, type ProgressMeter } from '@ddd-kit/core/internal';
import { RepositoryConfigurationError } from '../errors.js';
import type {
  ReconcileUniqueKeysOptions,
  UniqueKeyedRepository,
  UniqueKeysReconciliationReport,
} from './reconcile-unique-keys.interfaces.js';
import { releaseOrphans, restoreMissing, type Fail, type Sweep } from './reconcile-unique-keys.steps.js';
import type { UniqueKeyReservations } from './unique-key.interfaces.js';

const logger = new Logger('UniqueKeys');

export type {
  ReconcileUniqueKeysOptions,
  UniqueKeyedRepository,
  UniqueKeysReconciliationReport,
} from './reconcile-unique-keys.interfaces.js';

/**
 * Repairs the reservations of a repository's `@UniqueKey`s against the aggregates, both ways,
 * with no liveness check to write:
 *  1. each reservation of this aggregate type whose owner no longer exists or holds another
 *     value is released (a rollback conditional on the exact record seen, so one taken over
 *     meanwhile stays);
 *  2. each stored aggregate whose value has no reservation gets it back; one held by another
 *     aggregate is reported (`heldByOther`), and values that several aggregates share are
 *     reported (`shared`) — neither is changed: which aggregate keeps the value is a decision.
 * Reservations younger than `graceMs` are spared: their write may still be in flight. Safe on a
 * live system and safe to run again.
 */
export async function reconcileUniqueKeys<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  repository: UniqueKeyedRepository<ID, T>,
  options: ReconcileUniqueKeysOptions = {},
): Promise<UniqueKeysReconciliationReport> {
  const { graceMs = 10 * 60_000, dryRun = false, onError, now = Date.now } = options;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0)
    throw new RepositoryConfigurationError(
      `reconcileUniqueKeys: graceMs must be a non-negative integer, got ${String(graceMs)}`,
    );
  const reserver = typeof repository?.uniqueKeyReserver === 'function' ? repository.uniqueKeyReserver() : null;
  if (reserver === null)
    throw new RepositoryConfigurationError(
      `reconcileUniqueKeys: ${repository?.constructor?.name ?? String(repository)} stores an aggregate without @UniqueKey`,
    );
  const report = emptyReport();
  const fail: Fail = (error, what) => {
    report.failed++;
    onError?.(error, what);
  };
  const progress = progressMeter(options.onProgress, { intervalMs: options.progressIntervalMs, now });
  const sweep: Sweep<ID, T> = { repository, reserver, report, fail, dryRun, ...limits(options), progress, now };

  // 1. Reservations whose owner does not hold them.
  for (const { name } of reserver.definitions) await releaseOrphans(sweep, name, reserver.storeOf(name), graceMs);
  // 2. Aggregates whose values have no reservation, and values several aggregates share.
  const names = reserver.definitions.map((d) => d.name);
  await restoreMissing(sweep, names, (name) => reserver.storeOf(name));
  progress.finish();
  return report;
}

/**
 * Puts back the reservations of unique key `name` into `target`, a store that lost them and is not
 * sealed yet (PrepareKeyModule runs it through the restorer that RepositoryModule registers for
 * each `@UniqueKey`): each stored aggregate's value is reserved for it again, as
 * reconcileUniqueKeys' second step does. Values held by another aggregate, or shared by several,
 * are reported in the log (as reconcileUniqueKeys reports them) and changed by nothing. Rejects
 * when a value could not be restored, so that the store is not sealed after a partial restore.
 */
export async function restoreUniqueKeys<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  repository: UniqueKeyedRepository<ID, T>,
  name: string,
  target: UniqueKeyReservations,
  options: { pageSize?: number; concurrency?: number; progress?: ProgressMeter } = {},
): Promise<UniqueKeysReconciliationReport> {
  const reserver = repository.uniqueKeyReserver();
  if (reserver === null)
    throw new RepositoryConfigurationError(`restoreUniqueKeys: the repository declares no @UniqueKey`);
  const report = emptyReport();
  const errors: unknown[] = [];
  const fail: Fail = (error) => {
    report.failed++;
    errors.push(error);
  };
  const progress = options.progress ?? progressMeter(undefined);
  await restoreMissing(
    { repository, reserver, report, fail, dryRun: false, ...limits(options), progress, now: Date.now },
    [name],
    () => target,
  );
  for (const { key, id, holder } of report.heldByOther) {
    logger.warn(
      `restoring ${name} '${key}': ${reserver.aggregateName} ${JSON.stringify(id)} holds it, but ${holder.aggregate} ${JSON.stringify(holder.id)} has the reservation`,
    );
  }
  for (const { key, ids } of report.shared) {
    logger.error(
      `${name} '${key}' is held by several ${reserver.aggregateName}s: ${ids.map((id) => JSON.stringify(id)).join(', ')}`,
    );
  }
  if (report.failed > 0) {
    throw new Error(
      `restoring the reservations of '${name}' of ${reserver.aggregateName}: ${report.failed} failed (${describe(errors[0])})`,
      { cause: errors[0] },
    );
  }
  return report;
}

/** The page size and concurrency, checked (a bad page size is refused by the listings themselves). */
function limits(options: { pageSize?: number; concurrency?: number }): { pageSize: number; concurrency: number } {
  const { pageSize = 500, concurrency = 16 } = options;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new RepositoryConfigurationError(
      `reconcileUniqueKeys: concurrency must be a positive integer, got ${String(concurrency)}`,
    );
  return { pageSize, concurrency };
}

function emptyReport(): UniqueKeysReconciliationReport {
  return { scanned: 0, live: 0, spared: 0, released: 0, restored: 0, heldByOther: [], shared: [], failed: 0 };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
