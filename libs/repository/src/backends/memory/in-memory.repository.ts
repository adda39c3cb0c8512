import { deepClone } from '../../aggregate/aggregate-clone.utils.js';
import type { AggregateRoot } from '../../aggregate/aggregate-root.js';
import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { InMemoryOutboxStore } from './in-memory-outbox.store.js';
import type { OutboxStore } from '../../outbox/outbox.interfaces.js';
import { AbstractRepository } from '../../repository/abstract-repository.js';
import type { AggregatePage, LoadedAggregate } from '../../repository/repository.interfaces.js';

interface StoredRecord {
  version: number;
  document: unknown;
}

/**
 * Aggregates in a Map, for tests and the embedded default. It holds copies, never the caller's
 * instances: what `findById` returns can be changed freely and only a write changes the store,
 * so optimistic locking behaves as it does on a database. Each write is one synchronous
 * check-and-set, hence atomic within the process.
 *
 * The default copy keeps prototypes (see `deepClone`); override `toDocument` / `toAggregate`
 * for aggregates it cannot copy (state in `#private` fields, for instance).
 */
export class InMemoryRepository<ID extends AggregateId, T extends AggregateRoot<ID, any>> extends AbstractRepository<
  ID,
  T
> {
  private readonly records = new Map<ID, StoredRecord>();

  /** The number of stored aggregates. */
  get size(): number {
    return this.records.size;
  }

  /** What the store keeps for an aggregate: by default a deep copy. */
  protected toDocument(aggregate: T): unknown {
    return deepClone(aggregate);
  }

  /** The aggregate rebuilt from what the store keeps: by default a deep copy of it. */
  protected toAggregate(document: unknown, _id: ID): T {
    return deepClone(document) as T;
  }

  // With an InMemoryOutboxStore, each write appends its events in the same synchronous step as
  // the check-and-set: no other write or claim can run in between; first, so that events it
  // refuses leave nothing written.
  protected async doInsert(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    if (this.records.has(aggregate.id)) throw this.duplicate(aggregate);
    const document = this.toDocument(aggregate);
    (this.outbox as InMemoryOutboxStore | undefined)?.append(events);
    this.records.set(aggregate.id, { version: aggregate.newVersion, document });
  }

  protected async doUpdate(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    const record = this.records.get(aggregate.id);
    if (record === undefined || record.version !== aggregate.oldVersion) throw this.conflict(aggregate);
    const document = this.toDocument(aggregate);
    (this.outbox as InMemoryOutboxStore | undefined)?.append(events);
    this.records.set(aggregate.id, { version: aggregate.newVersion, document });
  }

  protected async doRemove(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    const record = this.records.get(aggregate.id);
    if (record === undefined || record.version !== aggregate.oldVersion) throw this.conflict(aggregate);
    (this.outbox as InMemoryOutboxStore | undefined)?.append(events);
    this.records.delete(aggregate.id);
  }

  protected override acceptsOutbox(outbox: OutboxStore): boolean {
    return outbox instanceof InMemoryOutboxStore;
  }

  protected override async doFindById(id: ID): Promise<LoadedAggregate<T> | null> {
    const record = this.records.get(id);
    return record === undefined ? null : { aggregate: this.toAggregate(record.document, id), version: record.version };
  }

  protected override async doListPage(cursor: ID | undefined, pageSize: number): Promise<AggregatePage<ID, T>> {
    const ids = [...this.records.keys()]
      .filter((id) => cursor === undefined || compareIds(id, cursor) > 0)
      .sort(compareIds);
    const page = ids.slice(0, pageSize);
    const aggregates = page.map((id) => ({
      aggregate: this.toAggregate(this.records.get(id)!.document, id),
      version: this.records.get(id)!.version,
    }));
    return { aggregates, next: ids.length > pageSize ? page[page.length - 1] : undefined };
  }

  protected override async doCurrentVersion(id: ID): Promise<number> {
    return this.records.get(id)?.version ?? -1;
  }
}

/** Ids in one order, numbers before strings. */
function compareIds(a: AggregateId, b: AggregateId): number {
  if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
