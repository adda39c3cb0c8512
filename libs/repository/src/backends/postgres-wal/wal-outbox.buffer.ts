import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { claimHeld, recordOf, type HeldOutboxEvent } from '../../outbox/held-events.js';
import { tallyOutboxStatus } from '../../outbox/outbox-arguments.js';
import type {
  OutboxClaim,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxRecord,
  OutboxStatus,
} from '../../outbox/outbox.interfaces.js';

/** One write's events as its message carries them (see WalOutboxMessage). */
export interface WalWrite {
  readonly storedAt: number;
  readonly nextAttemptAt: number;
  readonly events: readonly DataSyncEvent[];
}

/** A committed transaction read from the slot: where its commit ends, and its events not yet finished. */
interface Transaction {
  readonly endLsn: bigint;
  open: number;
}

/** A held event with its transaction; never dead while here (a dead letter leaves for its table). */
interface Entry extends HeldOutboxEvent {
  readonly transaction: Transaction;
}

/**
 * The pending events of the process holding the slot: the committed transactions read from it,
 * in commit order, with the leases of the relays delivering them (the in-memory store's rules).
 * An event leaves it when acked or buried (dead-lettered, its row written first); the slot's
 * position is confirmed past a transaction only once every event of it and of every
 * transaction before it has left — never past an event a handler has not finished.
 */
export class WalOutboxBuffer {
  private readonly entries = new Map<string, Entry>();
  /** Transactions not yet confirmed, in commit order. */
  private transactions: Transaction[] = [];
  private seq = 0;
  /** Readers waiting for room (see whenBelow). */
  private roomWaiters: Array<{ below: number; resolve: () => void }> = [];

  /** `confirm(lsn)`: every transaction whose commit ends at or before `lsn` is finished. */
  constructor(private readonly confirm: (lsn: bigint) => void) {}

  get size(): number {
    return this.entries.size;
  }

  /** True while a relay of this process holds an event (claimed, not yet acked, failed or released). */
  get claimed(): boolean {
    for (const e of this.entries.values()) if (e.owner !== null) return true;
    return false;
  }

  /** True when no transaction read waits for its events to finish. */
  get settled(): boolean {
    return this.transactions.length === 0;
  }

  /** A committed transaction (its commit ending at `endLsn`) with its writes' events, maybe none. */
  commit(endLsn: bigint, writes: readonly WalWrite[]): void {
    const transaction: Transaction = { endLsn, open: 0 };
    for (const write of writes) {
      for (const event of write.events) {
        if (this.entries.has(event.eventId)) continue;
        transaction.open++;
        this.entries.set(event.eventId, {
          seq: ++this.seq,
          eventId: event.eventId,
          aggregate: event.aggregate,
          aggregateId: event.id,
          version: event.version,
          event,
          storedAt: write.storedAt,
          attempts: 0,
          nextAttemptAt: write.nextAttemptAt,
          lastError: null,
          owner: null,
          leaseUntil: null,
          transaction,
          deadAt: null,
        });
      }
    }
    this.transactions.push(transaction);
    this.advance();
  }

  /** Forgets everything read (the slot was lost): whoever holds it next reads it again from the confirmed position. */
  clear(): void {
    this.entries.clear();
    this.transactions = [];
    this.wakeWaiters();
  }

  /** Resolves once fewer than `count` events are held (at once when already so). */
  whenBelow(count: number): Promise<void> {
    if (this.entries.size < count) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push({ below: count, resolve }));
  }

  claim(owner: string, limit: number, leaseMs: number, now: number): OutboxClaim[] {
    return claimHeld(this.entries.values(), owner, limit, leaseMs, now);
  }

  ack(owner: string, eventIds: readonly string[]): number {
    let removed = 0;
    for (const id of eventIds) {
      const entry = this.entries.get(id);
      if (entry === undefined || entry.owner !== owner) continue;
      this.remove(entry);
      removed++;
    }
    if (removed > 0) this.advance();
    return removed;
  }

  /**
   * The outcome of a failure of `eventId` leased to `owner`, changing nothing (null when it is
   * not pending or not theirs), and, when it makes it dead, the record to store as a dead letter.
   */
  failure(owner: string, eventId: string, failure: OutboxFailure): { dead: OutboxRecord | null } | null {
    const entry = this.entries.get(eventId);
    if (entry === undefined || entry.owner !== owner) return null;
    const attempts = entry.attempts + 1;
    if (attempts < failure.maxAttempts) return { dead: null };
    return { dead: { ...recordOf(entry), attempts, lastError: failure.error, deadAt: failure.now } };
  }

  /**
   * Applies a failure (see OutboxStore.fail): retried later, or — its dead letter stored —
   * removed; the owner's leases of the instance cleared. Null when the event is no longer theirs.
   */
  fail(owner: string, eventId: string, failure: OutboxFailure): OutboxFailureOutcome | null {
    const entry = this.entries.get(eventId);
    if (entry === undefined || entry.owner !== owner) return null;
    entry.attempts += 1;
    entry.lastError = failure.error;
    const dead = entry.attempts >= failure.maxAttempts;
    if (dead) this.remove(entry);
    else entry.nextAttemptAt = failure.retryAt;
    for (const e of this.entries.values()) {
      if (e.aggregate === entry.aggregate && e.aggregateId === entry.aggregateId && e.owner === owner) {
        e.owner = null;
        e.leaseUntil = null;
      }
    }
    if (dead) this.advance();
    return { attempts: entry.attempts, dead, nextAttemptAt: dead ? null : failure.retryAt };
  }

  renew(owner: string, eventIds: readonly string[], leaseUntil: number): number {
    let renewed = 0;
    for (const id of eventIds) {
      const entry = this.entries.get(id);
      if (entry === undefined || entry.owner !== owner) continue;
      entry.leaseUntil = leaseUntil;
      renewed++;
    }
    return renewed;
  }

  release(owner: string, eventIds?: readonly string[]): number {
    const only = eventIds === undefined ? undefined : new Set(eventIds);
    let released = 0;
    for (const e of this.entries.values()) {
      if (e.owner !== owner || (only !== undefined && !only.has(e.eventId))) continue;
      e.owner = null;
      e.leaseUntil = null;
      released++;
    }
    return released;
  }

  pending(now: number): Pick<OutboxStatus, 'pending' | 'oldestPendingAgeMs'> {
    const { pending, oldestPendingAgeMs } = tallyOutboxStatus(this.entries.values(), now);
    return { pending, oldestPendingAgeMs };
  }

  private remove(entry: Entry): void {
    this.entries.delete(entry.eventId);
    entry.transaction.open--;
    if (this.roomWaiters.length > 0) this.wakeWaiters();
  }

  private wakeWaiters(): void {
    const waiting = this.roomWaiters;
    this.roomWaiters = waiting.filter(({ below }) => this.entries.size >= below);
    for (const waiter of waiting) if (this.entries.size < waiter.below) waiter.resolve();
  }

  /** Confirms past the finished transactions at the front (commit order): never past an open one. */
  private advance(): void {
    let finished: Transaction | undefined;
    let count = 0;
    while (count < this.transactions.length && this.transactions[count].open === 0)
      finished = this.transactions[count++];
    if (finished === undefined) return;
    this.transactions = count === this.transactions.length ? [] : this.transactions.slice(count);
    this.confirm(finished.endLsn);
  }
}
