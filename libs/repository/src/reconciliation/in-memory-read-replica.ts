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
 * `apply` is idempotent by version, as every data-sync handler should be (the outbox delivers
 * at least once, and a replayed dead letter arrives after newer events): an event whose
 * version is not newer than what the replica last applied for that id changes nothing — a
 * repeat, an older UPSERT, and an UPSERT older than a PURGE already applied (the PURGE leaves a
 * tombstone with its version, so a stale UPSERT cannot bring a deleted entry back). `upsert`
 * and `purge` (the port, used by reconciliation) always apply, and `purge` leaves no tombstone.
 * One consequence: an id inserted again after its removal starts over at version 1, which the
 * tombstone hides — ids are not meant to be reused (generated ids never are).
 */
export class InMemoryReadReplica<ID extends AggregateId = AggregateId, S = unknown> implements ReadReplica<ID, S> {
  private readonly records = new Map<ID, ReplicaRecord<ID, S>>();
  /** The version of the last PURGE applied per deleted id: what a stale UPSERT is judged against. */
  private readonly tombstones = new Map<ID, number>();

  /** Applies the events of one write (an `@OnDataSync` handler can just call this). */
  apply(events: readonly DataSyncEvent[]): void {
    for (const event of events) {
      const id = event.id as ID;
      const applied = this.records.get(id)?.version ?? this.tombstones.get(id);
      if (applied !== undefined && applied >= event.version) continue;
      if (event.type === DataSyncEventType.PURGE) {
        this.records.delete(id);
        this.tombstones.set(id, event.version);
      } else {
        this.tombstones.delete(id);
        this.records.set(id, { id, version: event.version, snapshot: event.snapshot as S });
      }
    }
  }

  /** The version of the PURGE that deleted `id`, while no newer UPSERT came (undefined otherwise). */
  tombstone(id: ID): number | undefined {
    return this.tombstones.get(id);
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
    this.tombstones.delete(id);
    this.records.set(id, { id, version, snapshot });
  }

  async purge(id: ID): Promise<void> {
    this.tombstones.delete(id);
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
