import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';

/**
 * The storage port of the transactional outbox: what OutboxRelay needs of a store that keeps
 * data-sync events with the writes that produced them (a PostgreSQL table written in the
 * write's transaction, pending events carried inside a MongoDB document, a Map in memory).
 *
 * Writing events is not part of this port: each backend stores them inside its own write.
 * This port is the relay's side — claim, renew, ack, fail, release — and the operator's side —
 * status, dead letters listed, requeued and purged.
 *
 * Terms used by every contract below:
 * - An **instance** is one aggregate instance: the pair (`aggregate` name, `aggregateId`).
 * - An event is **pending** from the commit of its write until it is acked or dead-lettered.
 *   A **dead letter** is an event that failed `maxAttempts` times; it stays stored, is never
 *   claimed, and returns to pending only through `requeueDeadLetters` (or `replayDeadLetters`).
 * - An event **held** until a time (`event.availableAt`, stored as its first `nextAttemptAt`, the
 *   same for every event of its write) is pending but not due: as the head of its instance it
 *   holds the instance's later events too. Behind a due head a claim returns it like any pending
 *   event; the relay stops before it (OutboxLane).
 * - **Order** of an instance's events: by `version` ascending, then in the order one write
 *   collected them (one write may carry several events of the same version).
 * - The **head** of an instance is its first pending event in that order. An instance is
 *   **claimable** at time `now` when it has a head, the head's `nextAttemptAt <= now`, and none
 *   of its pending events is under a live lease (`leaseUntil > now`) — whoever holds it, the
 *   caller included. An expired lease counts as none.
 * - Every time (`now`, `storedAt`, `leaseUntil`, `nextAttemptAt`, `deadAt`) is epoch
 *   milliseconds from the application's clock (`Date.now()` unless a test injects one); the
 *   store never reads its own clock for them, so leases and retries are testable with a fake
 *   clock. A lease should be far longer than the clock skew between relay hosts.
 * - An `owner` is an opaque non-empty string naming one relay (unique per process).
 *
 * Every method validates its arguments first and rejects bad input (an empty owner, a
 * non-positive limit or lease, a non-finite time) with an error before changing anything.
 */
export interface OutboxStore {
  /**
   * Claims up to `limit` claimable instances for `owner` until `now + leaseMs`, and returns,
   * for each, every pending event of that instance in order (head first), each now leased to
   * `owner` with that `leaseUntil`. Instances are taken oldest head first (by `storedAt`).
   *
   * Guarantees:
   * - Atomic per instance: of any number of concurrent callers (processes included), at most
   *   one receives a given instance while its lease is live; a caller gets all of the
   *   instance's pending events or none of them.
   * - An instance with any pending event leased to anyone with `leaseUntil > now`, or whose
   *   head is not due (`nextAttemptAt > now`), is not returned — later events of that instance wait behind
   *   it, which is what keeps delivery in order.
   * - A lease that has expired (`leaseUntil <= now`) is ignored: a crashed relay's claims are
   *   taken over once their lease ran out.
   * - Dead letters are never returned. Resolves `[]` when nothing is claimable.
   */
  claim(request: OutboxClaimRequest): Promise<OutboxClaim[]>;

  /**
   * The handlers ran for these events: removes them from the outbox for good. Only events
   * still leased to `owner` are removed (an event whose lease another relay took over stays
   * for that relay; it may then be delivered twice, which at-least-once allows). Unknown ids,
   * and ids of events not leased to `owner`, are ignored. Resolves the number removed.
   */
  ack(owner: string, eventIds: readonly string[]): Promise<number>;

  /**
   * Delivering `eventId` (leased to `owner`) failed. Atomically: its `attempts` grows by one
   * and `lastError` becomes `failure.error`; when `attempts` reaches `failure.maxAttempts` it
   * becomes a dead letter (`deadAt = failure.now`), else its `nextAttemptAt` becomes
   * `failure.retryAt`. In both cases the lease of every event of that instance held by `owner`
   * is cleared (the relay stops at the first failure of an instance; whoever claims next starts
   * again from the head). Resolves the event's state after the call, or `null` (changing
   * nothing) when the event is not pending or not leased to `owner`.
   */
  fail(owner: string, eventId: string, failure: OutboxFailure): Promise<OutboxFailureOutcome | null>;

  /**
   * Extends to `leaseUntil` the lease of each of these events that is still pending and leased
   * to `owner` (a relay calls it while a handler runs, so that a slow handler keeps its
   * instance). An event acked, failed, released or taken over by another relay is not renewed:
   * the relay learns from the count that its claim is gone. Unknown ids are ignored. Resolves
   * the number of events renewed.
   */
  renew(owner: string, eventIds: readonly string[], leaseUntil: number): Promise<number>;

  /**
   * Clears every lease held by `owner` (graceful shutdown, or giving up a claim without
   * delivering): those events become claimable at once, their `attempts` and `nextAttemptAt`
   * unchanged. With `eventIds`, only those events' leases. Resolves the number of events released.
   */
  release(owner: string, eventIds?: readonly string[]): Promise<number>;

  /**
   * Counts for health checks at time `now`: `pending` events (leased or not, due or not),
   * `oldestPendingAgeMs` = how long the longest-waiting due event has waited (`null` when none
   * is due): `now - storedAt`, or `now - nextAttemptAt` for an event never attempted (held,
   * or requeued, it waits from when it became due; one held beyond `now` does not count),
   * `deadLetters` = the number of dead letters, `oldestDeadLetterAgeMs` = `now - deadAt` of the
   * oldest (`null` when none).
   */
  status(now: number): Promise<OutboxStatus>;

  /**
   * Dead letters matching the query's filter (see OutboxDeadLetterFilter), oldest `deadAt`
   * first (ties in order of `eventId`), at most `query.limit` (default 100), starting after the
   * dead letter whose id is `query.after` when given (paging: pass the last `eventId` of the
   * previous page; an `after` that is not a dead letter of this store yields `[]`).
   */
  listDeadLetters(query?: OutboxDeadLetterQuery): Promise<OutboxRecord[]>;

  /**
   * Makes the dead letters matching `filter` pending again: `attempts` 0, `nextAttemptAt = now`,
   * no lease, `deadAt` and `lastError` cleared. `{}` matches every dead letter. Resolves the
   * number requeued. (A requeued event is older than the instance's later events that were
   * delivered meanwhile; handlers idempotent by version ignore it.)
   */
  requeueDeadLetters(filter: OutboxDeadLetterFilter, now: number): Promise<number>;

  /**
   * Deletes the dead letters matching `filter` for good (`{}`: every one); pending events are
   * never touched. Resolves the number deleted.
   */
  purgeDeadLetters(filter: OutboxDeadLetterFilter): Promise<number>;

  /** `requeueDeadLetters({ eventIds }, now)`: ids that are not dead letters are ignored. */
  replayDeadLetters(eventIds: readonly string[], now: number): Promise<number>;

  /**
   * Optional: calls `listener` soon after new events were committed (PostgreSQL LISTEN/NOTIFY,
   * an in-process emitter), so a relay need not wait for its next poll. A hint only — it may
   * be missed or spurious; polling stays the guarantee. Resolves a function that unsubscribes.
   */
  watch?(listener: () => void): Promise<() => Promise<void>>;

  /**
   * Optional: from now on, a write of this process may store its events already claimed by
   * `relay` (a relay of this process), and hand them to it once the write committed — no claim
   * statement, no wait for a wake-up. The store does so only for an instance with no pending
   * event at all (the new events are then its head, so nobody else can be delivering it), and
   * only while `relay.hasRoom()`; otherwise the events are stored unclaimed, as without a
   * relay. A handed-off claim is leased to `relay.owner` from the write on, like one `claim`
   * returned. Resolves a function that stops it.
   */
  attachRelay?(relay: OutboxLocalRelay): () => void;
}

/** A relay running in the writing process, as a store sees it (see OutboxStore.attachRelay). */
export interface OutboxLocalRelay {
  readonly owner: string;
  readonly leaseMs: number;
  /** The relay's clock (epoch ms): a handed-off claim's lease runs from here. */
  now(): number;
  /** True while it takes more instances (running, not stopping, lanes free). */
  hasRoom(): boolean;
  /**
   * A write committed with its events claimed for this relay: deliver them. Called after the
   * commit (never after a rollback); a relay that stopped meanwhile releases them.
   */
  take(claim: OutboxClaim): void;
}

export interface OutboxClaimRequest {
  /** The relay claiming; non-empty. */
  readonly owner: string;
  /** The most instances to claim; a positive integer. */
  readonly limit: number;
  /** How long the claim holds; a positive integer of milliseconds. */
  readonly leaseMs: number;
  /** The time of the claim (epoch ms). */
  readonly now: number;
}

/** One instance's pending events, leased to one relay. */
export interface OutboxClaim {
  readonly aggregate: string;
  readonly aggregateId: AggregateId;
  readonly owner: string;
  readonly leaseUntil: number;
  /** Every pending event of the instance, in order (head first); never empty. */
  readonly events: readonly OutboxRecord[];
}

/** A stored event with its delivery state. */
export interface OutboxRecord {
  readonly eventId: string;
  /** The aggregate name (`event.aggregate`). */
  readonly aggregate: string;
  /** The instance's id (`event.id`, with its type: string or number). */
  readonly aggregateId: AggregateId;
  /** `event.version`. */
  readonly version: number;
  /** The event as written (equal field by field to what the write collected, `eventId` included). */
  readonly event: DataSyncEvent;
  /** When its write stored it. */
  readonly storedAt: number;
  /** Failed deliveries so far. */
  readonly attempts: number;
  /**
   * Not claimable before this time: at the write, `storedAt` or the latest `availableAt` of the
   * write's events (they are delivered together); after a failure, the retry's time.
   */
  readonly nextAttemptAt: number;
  /** The error message of the last failed delivery, or null. */
  readonly lastError: string | null;
  /** When it became a dead letter, or null while pending. */
  readonly deadAt: number | null;
}

export interface OutboxFailure {
  /** The failure's message (kept as `lastError`). */
  readonly error: string;
  /** When to try again, if it stays pending (epoch ms). */
  readonly retryAt: number;
  /** Attempts after which the event is a dead letter; a positive integer. */
  readonly maxAttempts: number;
  /** The time of the failure (epoch ms; becomes `deadAt`). */
  readonly now: number;
}

export interface OutboxFailureOutcome {
  readonly attempts: number;
  /** True when this failure made it a dead letter. */
  readonly dead: boolean;
  /** When it will be tried again (null when dead). */
  readonly nextAttemptAt: number | null;
}

export interface OutboxStatus {
  /** Events not yet delivered and not dead (leased or not). */
  readonly pending: number;
  /** Age of the oldest pending event, or null when none is pending. */
  readonly oldestPendingAgeMs: number | null;
  /** Events that failed `maxAttempts` times (or failed for good) and wait for an operator. */
  readonly deadLetters: number;
  /** How long ago the oldest dead letter died, or null when there is none. */
  readonly oldestDeadLetterAgeMs: number | null;
  /** The replication slots a store reads (PostgresWalOutboxStore); absent for a store without one. */
  readonly slots?: readonly OutboxSlotStatus[];
}

/** A logical replication slot an outbox reads, as its store reports it (see OutboxStatus.slots). */
export interface OutboxSlotStatus {
  readonly slot: string;
  /** True while this process reads it. */
  readonly held: boolean;
  /** True while some process reads it. */
  readonly active: boolean;
  /** WAL the slot keeps from being recycled (`pg_current_wal_lsn() - restart_lsn`), in bytes; null when the slot is missing. */
  readonly retainedWalBytes: number | null;
  /** How far its confirmed position is behind (`pg_current_wal_lsn() - confirmed_flush_lsn`), in bytes; null when the slot is missing. */
  readonly lagBytes: number | null;
}

/**
 * Which dead letters an operator's call acts on: those matching every field given (`{}`: all).
 * Values are compared, never interpreted: no field becomes a query operator.
 */
export interface OutboxDeadLetterFilter {
  /** Only events of this type (`event.type`, e.g. `UPSERT`). */
  readonly type?: string;
  /** Only this aggregate name's. */
  readonly aggregate?: string;
  /** Only this instance's (requires `aggregate`); ids compare as text (`7` matches `'7'`). */
  readonly aggregateId?: AggregateId;
  /** Only those that died before this time (`deadAt < deadBefore`, epoch ms). */
  readonly deadBefore?: number;
  /** Only these events. */
  readonly eventIds?: readonly string[];
}

export interface OutboxDeadLetterQuery extends OutboxDeadLetterFilter {
  /** At most this many (positive integer; default 100). */
  readonly limit?: number;
  /** The `eventId` of the last dead letter of the previous page. */
  readonly after?: string;
}
