import type { SweepProgress } from '@ddd-kit/core';
import type { PreparedRecord } from '../prepare-key.interfaces.js';
import type { PreparedValue } from '../prepared-value.js';

/**
 * Whether the owner a record names still holds its reservation, e.g. "does user 42 still have
 * username 'alice'" against the write model. Only an explicit `false` releases the record.
 */
export type ReservationLiveness<V> = (
  key: string,
  value: V,
  prepared: PreparedValue<V>,
) => boolean | PromiseLike<boolean>;

/**
 * Whether the owners of a page of records still hold them, asked once per page (one query of the
 * write model for hundreds of records): one answer per record, in their order. Only an explicit
 * `false` releases a record.
 */
export type ReservationPageLiveness<V> = (
  records: ReadonlyArray<PreparedRecord<V>>,
) => ReadonlyArray<boolean> | PromiseLike<ReadonlyArray<boolean>>;

export interface ReconcileReservationsOptions {
  /** Records listed per backend round trip. Default 500. */
  pageSize?: number;
  /** Records checked (isLive, then rollback) at once; with a page liveness, rollbacks at once. Default 16. */
  concurrency?: number;
  /** Ask `isLive` and count, but release nothing: `released` counts what would be released. */
  dryRun?: boolean;
  /**
   * Also judge records whose ttlAt has passed. By default they are counted as `expired` and
   * left alone: they already free their key, and the backend drops them after its retention.
   */
  includeExpired?: boolean;
  /** The clock that tells expired records apart. Default `Date.now`. */
  now?: () => number;
  /** Called for each record whose check or release failed (it is counted in `failed`). */
  onError?: (error: unknown, key: string) => void;
  /** Called with the records done so far and the rate, at most every `progressIntervalMs`, and once at the end. */
  onProgress?: (progress: SweepProgress) => void;
  /** Default 5 seconds. */
  progressIntervalMs?: number;
}

export interface ReservationsReconciliationReport {
  /** Records listed. */
  scanned: number;
  /** Expired records left alone (see `includeExpired`). */
  expired: number;
  /** Records whose owner `isLive` confirmed. */
  live: number;
  /** Records released by a conditional rollback on the value seen (or, in a dry run, that would be). */
  released: number;
  /** Records whose value changed, or that went away, between listing and rollback: left as they are. */
  skipped: number;
  /** Records whose `isLive` or rollback threw, or whose `isLive` did not answer a boolean. */
  failed: number;
}
