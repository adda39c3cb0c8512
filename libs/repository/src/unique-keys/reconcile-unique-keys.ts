import { Logger } from '@nestjs/common';
import type { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import { InvalidAggregateIdError, RepositoryConfigurationError } from '../errors.js';
import type { UniqueKeyReserver } from './unique-key.reserver.js';
import type { UniqueKeyOwner, UniqueKeyReservations } from './unique-key.interfaces.js';

const logger = new Logger('UniqueKeys');

export interface ReconcileUniqueKeysOptions {
  /** Reservations younger than this are spared (writes still in flight); default 10 minutes, 0 judges every one. */
  graceMs?: number;
  /** Count what would change, change nothing. */
  dryRun?: boolean;
  /** Records and aggregates per page; default 500. */
  pageSize?: number;
  /** Called for each reservation or aggregate counted as failed. */
  onError?: (error: unknown, what: { name: string; key?: string; id?: AggregateId }) => void;
}

export interface UniqueKeysReconciliationReport {
  /** Reservations of this aggregate type looked at. */
  scanned: number;
  /** Held by an aggregate that exists and has that value. */
  live: number;
  /** Not held by their owner, but younger than graceMs: left alone (their write may be in flight). */
  spared: number;
  /** Released: their owner is gone, or holds another value. */
  released: number;
  /** Aggregates whose value had no reservation: reserved again. */
  restored: number;
  /** Aggregates whose value is reserved by another aggregate: reported, nothing changed. */
  heldByOther: Array<{ name: string; key: string; id: AggregateId; holder: { aggregate: string; id: AggregateId } }>;
  /** Values that several stored aggregates share (a breach to resolve by hand). */
  shared: Array<{ name: string; key: string; ids: AggregateId[] }>;
  failed: number;
}

/** What reconcileUniqueKeys needs of a repository: every AbstractRepository is one. */
export interface UniqueKeyedRepository<ID extends AggregateId, T> {
  /** The reserver of the aggregate's unique keys, or null when it declares none. */
  uniqueKeyReserver(): UniqueKeyReserver | null;
  aggregates(options: { pageSize?: number }): AsyncIterable<T>;
  findById(id: ID): Promise<T | null>;
}

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
  const { graceMs = 10 * 60_000, dryRun = false, pageSize = 500, onError } = options;
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
  const fail = (error: unknown, what: { name: string; key?: string; id?: AggregateId }) => {
    report.failed++;
    onError?.(error, what);
  };
  const load = (id: AggregateId): Promise<T | null> => loadAggregate(repository, id);

  // 1. Reservations whose owner does not hold them.
  for (const { name } of reserver.definitions) {
    const store = reserver.storeOf(name);
    for await (const record of store.records({ pageSize })) {
      const owner = record.value.value as Partial<UniqueKeyOwner> | null;
      if (owner === null || typeof owner !== 'object' || owner.aggregate !== reserver.aggregateName) continue; // another type's
      if (record.value.isExpired()) continue; // holds nothing
      report.scanned++;
      try {
        const aggregate = owner.id === undefined ? null : await load(owner.id);
        const value = aggregate === null ? undefined : reserver.valuesOf(aggregate).get(name);
        // Live when the aggregate's value is this key — as the store sees it: a PrepareKey that
        // normalises keys (case-folding, say) stores 'ann' for the value 'Ann'.
        if (value !== undefined && (value === record.key || sameOwner((await store.getValue(value))?.value, owner))) {
          report.live++;
          continue;
        }
        if (typeof owner.at === 'number' && Date.now() - owner.at < graceMs) {
          report.spared++;
          continue;
        }
        if (dryRun || (await store.rollback(record.key, record.value.value))) report.released++;
      } catch (error) {
        fail(error, { name, key: record.key });
      }
    }
  }

  // 2. Aggregates whose values have no reservation, and values several aggregates share.
  const names = reserver.definitions.map((d) => d.name);
  await restoreMissing(
    repository,
    reserver,
    names,
    (name) => reserver.storeOf(name),
    { dryRun, pageSize },
    report,
    fail,
  );
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
  options: { pageSize?: number } = {},
): Promise<UniqueKeysReconciliationReport> {
  const reserver = repository.uniqueKeyReserver();
  if (reserver === null)
    throw new RepositoryConfigurationError(`restoreUniqueKeys: the repository declares no @UniqueKey`);
  const report = emptyReport();
  const errors: unknown[] = [];
  await restoreMissing(
    repository,
    reserver,
    [name],
    () => target,
    { dryRun: false, pageSize: options.pageSize ?? 500 },
    report,
    (error) => {
      report.failed++;
      errors.push(error);
    },
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

/** Step 2 of reconcileUniqueKeys on the keys `names`, reserving in `storeOf(name)`. */
async function restoreMissing<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  repository: UniqueKeyedRepository<ID, T>,
  reserver: UniqueKeyReserver,
  names: readonly string[],
  storeOf: (name: string) => UniqueKeyReservations,
  { dryRun, pageSize }: { dryRun: boolean; pageSize: number },
  report: UniqueKeysReconciliationReport,
  fail: (error: unknown, what: { name: string; key?: string; id?: AggregateId }) => void,
): Promise<void> {
  const holders = new Map<string, Map<string, AggregateId[]>>(names.map((name) => [name, new Map()]));
  for await (const aggregate of repository.aggregates({ pageSize })) {
    for (const [name, key] of reserver.valuesOf(aggregate)) {
      const ids = holders.get(name);
      if (key === undefined || ids === undefined) continue;
      ids.set(key, [...(ids.get(key) ?? []), aggregate.id]);
      try {
        const store = storeOf(name);
        const current = await store.getValue(key);
        if (current !== undefined && !current.isExpired()) {
          if (!reserver.isOwner(current.value, aggregate.id)) {
            report.heldByOther.push({
              name,
              key,
              id: aggregate.id,
              holder: { aggregate: current.value.aggregate, id: current.value.id },
            });
          }
          continue;
        }
        if (dryRun) {
          report.restored++;
          continue;
        }
        const owner = reserver.owner(aggregate.id);
        if (!(await store.prepare(key, owner))) continue; // taken meanwhile: the next run judges it
        // The aggregate may have moved on while this ran: undo a restore it no longer needs.
        const now = await loadAggregate(repository, aggregate.id);
        if (now !== null && reserver.valuesOf(now).get(name) === key) report.restored++;
        else await store.rollback(key, owner);
      } catch (error) {
        fail(error, { name, key, id: aggregate.id });
      }
    }
  }
  for (const [name, byKey] of holders) {
    for (const [key, ids] of byKey) if (ids.length > 1) report.shared.push({ name, key, ids });
  }
}

async function loadAggregate<ID extends AggregateId, T>(
  repository: UniqueKeyedRepository<ID, T>,
  id: AggregateId,
): Promise<T | null> {
  try {
    return await repository.findById(id as ID);
  } catch (error) {
    if (error instanceof InvalidAggregateIdError) return null;
    throw error;
  }
}

function emptyReport(): UniqueKeysReconciliationReport {
  return { scanned: 0, live: 0, spared: 0, released: 0, restored: 0, heldByOther: [], shared: [], failed: 0 };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sameOwner(a: Partial<UniqueKeyOwner> | undefined, b: Partial<UniqueKeyOwner>): boolean {
  return a !== undefined && a.aggregate === b.aggregate && a.id === b.id && a.at === b.at;
}
