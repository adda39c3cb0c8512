import type { AggregateId } from '../aggregate/aggregate.interfaces.js';

/** What a replica holds for one aggregate: its id and the version of the snapshot it holds. */
export interface ReplicaEntry<ID extends AggregateId = AggregateId> {
  id: ID;
  version: number;
}

/** One page of a replica's entries; `cursor` continues the listing, `null` ends it. */
export interface ReplicaPage<ID extends AggregateId = AggregateId> {
  entries: ReplicaEntry<ID>[];
  cursor: string | null;
}

/**
 * The port reconciliation needs from a read model kept from data-sync events (a search index,
 * a cache, a denormalised table): list what it holds, overwrite one entry, drop one entry.
 * Listing must eventually visit every entry present for the whole sweep; seeing an entry twice
 * is harmless (every repair is idempotent).
 */
export interface ReadReplica<ID extends AggregateId = AggregateId, S = unknown> {
  /** Entries after `cursor` (from the start when null), at most `limit` of them. */
  listVersions(page: { cursor: string | null; limit: number }): Promise<ReplicaPage<ID>>;
  /** Holds `snapshot` at `version` for `id`, whatever it held before. */
  upsert(id: ID, version: number, snapshot: S): Promise<void>;
  /** Drops `id` (nothing happens when it is absent). */
  purge(id: ID): Promise<void>;
}
