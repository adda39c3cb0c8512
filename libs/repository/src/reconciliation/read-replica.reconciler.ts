import type { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { IRepository } from '../repository/repository.interfaces.js';
import type { ReadReplica, ReplicaEntry } from './read-replica.interfaces.js';
import { checkReplicaEntry, ReplicaEntryStatus } from './replica-entry-status.js';

export interface ReadReplicaReconcilerOptions<T, S> {
  /** Entries per page. Default 100. */
  pageSize?: number;
  /** What a resync writes to the replica; default `aggregate.toSnapshot()`, the UPSERT snapshot. */
  snapshot?: (aggregate: T) => S;
  /** How many failed entries the report keeps in `errors` (all are counted). Default 100. */
  maxReportedErrors?: number;
}

export interface ReconciliationReport<ID extends AggregateId = AggregateId> {
  /** Entries looked at. */
  scanned: number;
  ok: number;
  /** Entries found STALE (each is resynced, or purged if the aggregate vanished meanwhile). */
  stale: number;
  /** Entries found ORPHAN, plus STALE ones whose aggregate was gone by the time of the resync. */
  orphans: number;
  /** Entries overwritten with the write model's snapshot and version. */
  resynced: number;
  /** Entries dropped from the replica. */
  purged: number;
  /** Entries whose check or repair threw; they are left as they were. */
  failed: number;
  errors: Array<{ id: ID; error: unknown }>;
}

/**
 * Sweeps a read replica page by page and repairs it against the write model:
 * STALE → `findById` and `upsert` the aggregate's snapshot at its stored version;
 * ORPHAN (`currentVersion` -1) → `purge`. This is the safety net for everything in-process
 * event delivery can miss: a crash after a write, a dropped or failed handler, rows deleted
 * behind the repository's back.
 *
 * It walks what the replica holds, so it cannot find an aggregate the replica never heard of
 * (its first UPSERT lost); `resync(ids)` repairs known ids directly.
 */
export class ReadReplicaReconciler<
  ID extends AggregateId,
  T extends AggregateRoot<ID, any>,
  S = ReturnType<T['toSnapshot']>,
> {
  private readonly pageSize: number;
  private readonly snapshot: (aggregate: T) => S;
  private readonly maxReportedErrors: number;

  constructor(
    private readonly repository: Pick<IRepository<ID, T>, 'findById' | 'currentVersion'>,
    private readonly replica: ReadReplica<ID, S>,
    options: ReadReplicaReconcilerOptions<T, S> = {},
  ) {
    this.pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1)
      throw new RangeError(`pageSize must be an integer ≥ 1, got ${String(options.pageSize)}`);
    this.snapshot = options.snapshot ?? ((aggregate) => aggregate.toSnapshot() as S);
    this.maxReportedErrors = options.maxReportedErrors ?? 100;
  }

  /** One full sweep of the replica. */
  async run(): Promise<ReconciliationReport<ID>> {
    const report = emptyReport<ID>();
    let cursor: string | null = null;
    do {
      const page = await this.replica.listVersions({ cursor, limit: this.pageSize });
      for (const entry of page.entries) await this.reconcileInto(entry, report);
      cursor = page.cursor;
    } while (cursor !== null);
    return report;
  }

  /** Brings the given ids in line with the write model whether or not the replica holds them. */
  async resync(ids: Iterable<ID>): Promise<ReconciliationReport<ID>> {
    const report = emptyReport<ID>();
    for (const id of ids) {
      report.scanned++;
      try {
        await this.repair(id, report);
      } catch (error) {
        this.fail(report, id, error);
      }
    }
    return report;
  }

  private async reconcileInto(entry: ReplicaEntry<ID>, report: ReconciliationReport<ID>): Promise<void> {
    report.scanned++;
    try {
      const check = await checkReplicaEntry(this.repository, entry);
      switch (check.status) {
        case ReplicaEntryStatus.OK:
          report.ok++;
          return;
        case ReplicaEntryStatus.ORPHAN:
          report.orphans++;
          await this.replica.purge(entry.id);
          report.purged++;
          return;
        case ReplicaEntryStatus.STALE:
          report.stale++;
          await this.repair(entry.id, report);
          return;
      }
    } catch (error) {
      this.fail(report, entry.id, error);
    }
  }

  private async repair(id: ID, report: ReconciliationReport<ID>): Promise<void> {
    const aggregate = await this.repository.findById(id);
    if (aggregate === null) {
      // Removed between the check and now: it is an orphan after all.
      report.orphans++;
      await this.replica.purge(id);
      report.purged++;
      return;
    }
    await this.replica.upsert(id, aggregate.oldVersion, this.snapshot(aggregate));
    report.resynced++;
  }

  private fail(report: ReconciliationReport<ID>, id: ID, error: unknown): void {
    report.failed++;
    if (report.errors.length < this.maxReportedErrors) report.errors.push({ id, error });
  }
}

function emptyReport<ID extends AggregateId>(): ReconciliationReport<ID> {
  return { scanned: 0, ok: 0, stale: 0, orphans: 0, resynced: 0, purged: 0, failed: 0, errors: [] };
}
