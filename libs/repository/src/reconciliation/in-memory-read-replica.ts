import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import { DataSyncEventType, type DataSyncEvent } from '../data-sync/data-sync-event.js';
import type { ReadReplica, ReplicaEntry, ReplicaPage } from './read-replica.interfaces.js';

export interface ReplicaRecord<ID extends AggregateId, S> {
  id: ID;
  version: number;
  snapshot: S;
}

/**
 * A read model in a Map: fed with `apply(events)` from an `@OnDataSync` handler, queried with
 * `get` / `find`, and repaired by ReadReplicaReconciler through the ReadReplica port.
 *
 * `apply` ignores an UPSERT older than what it holds (handlers of concurrent writes may finish
 * out of order); `upsert` and `purge` (the port, used by reconciliation) always apply. It keeps
 * no tombstones, so an UPSERT overtaken by the PURGE of a later write would bring the entry back
 * until the next reconciliation finds it ORPHAN.
 */
export class InMemoryReadReplica<ID extends AggregateId = AggregateId, S = unknown> implements ReadReplica<ID, S> {
  private readonly records = new Map<ID, ReplicaRecord<ID, S>>();

  /** Applies the events of one write (an `@OnDataSync` handler can just call this). */
  apply(events: readonly DataSyncEvent[]): void {
    for (const event of events) {
      const id = event.id as ID;
      if (event.type === DataSyncEventType.PURGE) {
        this.records.delete(id);
      } else {
        const held = this.records.get(id);
        if (held === undefined || held.version < event.version) {
          this.records.set(id, { id, version: event.version, snapshot: event.snapshot as S });
        }
      }
    }
  }

  get(id: ID): ReplicaRecord<ID, S> | undefined {
    return this.records.get(id);
  }

  /** The records whose snapshot matches, in id order. */
  find(predicate: (snapshot: S, id: ID) => boolean): ReplicaRecord<ID, S>[] {
    return this.sorted().filter((record) => predicate(record.snapshot, record.id));
  }

  /** Every record, in id order. */
  all(): ReplicaRecord<ID, S>[] {
    return this.sorted();
  }

  get size(): number {
    return this.records.size;
  }

  async listVersions({ cursor, limit }: { cursor: string | null; limit: number }): Promise<ReplicaPage<ID>> {
    // Keyset paging on the id order: entries purged or changed during a sweep never shift the
    // pages after them. The cursor is the last id, JSON-encoded to keep strings and numbers apart.
    const after = cursor === null ? undefined : (JSON.parse(cursor) as ID);
    const page: ReplicaEntry<ID>[] = [];
    for (const record of this.sorted()) {
      if (after !== undefined && compareIds(record.id, after) <= 0) continue;
      page.push({ id: record.id, version: record.version });
      if (page.length === limit) break;
    }
    return { entries: page, cursor: page.length === limit ? JSON.stringify(page[page.length - 1].id) : null };
  }

  async upsert(id: ID, version: number, snapshot: S): Promise<void> {
    this.records.set(id, { id, version, snapshot });
  }

  async purge(id: ID): Promise<void> {
    this.records.delete(id);
  }

  private sorted(): ReplicaRecord<ID, S>[] {
    return [...this.records.values()].sort((a, b) => compareIds(a.id, b.id));
  }
}

// Numbers before strings; numbers by value, strings by code unit.
function compareIds(a: AggregateId, b: AggregateId): number {
  if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
