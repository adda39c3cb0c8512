import type { SweepProgress } from '@ddd-kit/core';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { UniqueKeyReserver } from './unique-key.reserver.js';

export interface ReconcileUniqueKeysOptions {
  /** Reservations younger than this are spared (writes still in flight); default 10 minutes, 0 judges every one. */
  graceMs?: number;
  /** The clock `graceMs` is judged by (against each reservation's `at`). Default `Date.now`. */
  now?: () => number;
  /** Count what would change, change nothing. */
  dryRun?: boolean;
  /** Records and aggregates per page (each page is read and compared as one set); default 500. */
  pageSize?: number;
  /** Releases and restores in flight at once; default 16. */
  concurrency?: number;
  /** Called for each reservation or aggregate counted as failed. */
  onError?: (error: unknown, what: { name: string; key?: string; id?: AggregateId }) => void;
  /** Called as the sweep goes (reservations, then aggregates), at most every `progressIntervalMs`, and once at the end. */
  onProgress?: (progress: SweepProgress) => void;
  /** Default 5 seconds. */
  progressIntervalMs?: number;
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
  /** The stored aggregates among `ids`, by `String(id)`; without it, findById is called for each. */
  findByIds?(ids: readonly ID[]): Promise<Map<string, T>>;
}
