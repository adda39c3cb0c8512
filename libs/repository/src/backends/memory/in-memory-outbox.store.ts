import { claimHeld, recordOf, type HeldOutboxEvent } from '../../outbox/held-events.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import {
  checkDeadLetterFilter,
  checkEventId,
  checkEventIds,
  checkOwner,
  checkPositiveInteger,
  checkText,
  checkTime,
  firstDueAt,
  matchesDeadLetterFilter,
  tallyOutboxStatus,
} from '../../outbox/outbox-arguments.js';
import type {
  OutboxClaim,
  OutboxClaimRequest,
  OutboxDeadLetterFilter,
  OutboxDeadLetterQuery,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from '../../outbox/outbox.interfaces.js';

type Entry = HeldOutboxEvent;

/**
 * The outbox of InMemoryRepository: events kept in this process beside the aggregates, each
 * `append` synchronous with the repository's own check-and-set, so a write and its events are
 * one step. Nothing survives the process — which holds the aggregates too. Every method is
 * synchronous inside, hence atomic against concurrent callers of the same process.
 */
export class InMemoryOutboxStore implements OutboxStore {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  private seq = 0;

  /**
   * Stores the events of one committed write (InMemoryRepository calls it inside its write, before
   * storing the aggregate: an event it refuses leaves nothing written).
   */
  append(events: readonly DataSyncEvent[], now: number = Date.now()): void {
    const due = firstDueAt(events, now);
    for (const event of events) {
      this.entries.set(event.eventId, {
        seq: ++this.seq,
        eventId: event.eventId,
        aggregate: event.aggregate,
        aggregateId: event.id,
        version: event.version,
        event,
        storedAt: now,
        attempts: 0,
        nextAttemptAt: due,
        lastError: null,
        deadAt: null,
        owner: null,
        leaseUntil: null,
      });
    }
    if (events.length > 0 && this.listeners.size > 0)
      queueMicrotask(() => this.listeners.forEach((listener) => listener()));
  }

  async claim(request: OutboxClaimRequest): Promise<OutboxClaim[]> {
    const owner = checkOwner(request?.owner);
    const limit = checkPositiveInteger(request.limit, 'limit');
    const leaseMs = checkPositiveInteger(request.leaseMs, 'leaseMs');
    const now = checkTime(request.now, 'now');
    return claimHeld(this.entries.values(), owner, limit, leaseMs, now);
  }

  async ack(owner: string, eventIds: readonly string[]): Promise<number> {
    checkOwner(owner);
    let removed = 0;
    for (const id of checkEventIds(eventIds)) {
      const entry = this.entries.get(id);
      if (entry !== undefined && entry.deadAt === null && entry.owner === owner) {
        this.entries.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async fail(owner: string, eventId: string, failure: OutboxFailure): Promise<OutboxFailureOutcome | null> {
    checkOwner(owner);
    checkEventId(eventId);
    const error = checkText(failure?.error, 'failure.error');
    const retryAt = checkTime(failure.retryAt, 'failure.retryAt');
    const maxAttempts = checkPositiveInteger(failure.maxAttempts, 'failure.maxAttempts');
    const now = checkTime(failure.now, 'failure.now');
    const entry = this.entries.get(eventId);
    if (entry === undefined || entry.deadAt !== null || entry.owner !== owner) return null;
    entry.attempts += 1;
    entry.lastError = error;
    const dead = entry.attempts >= maxAttempts;
    if (dead) entry.deadAt = now;
    else entry.nextAttemptAt = retryAt;
    for (const e of this.entries.values()) {
      if (e.aggregate === entry.aggregate && e.aggregateId === entry.aggregateId && e.owner === owner) {
        e.owner = null;
        e.leaseUntil = null;
      }
    }
    return { attempts: entry.attempts, dead, nextAttemptAt: dead ? null : retryAt };
  }

  async renew(owner: string, eventIds: readonly string[], leaseUntil: number): Promise<number> {
    checkOwner(owner);
    const ids = checkEventIds(eventIds);
    checkTime(leaseUntil, 'leaseUntil');
    let renewed = 0;
    for (const id of ids) {
      const entry = this.entries.get(id);
      if (entry === undefined || entry.deadAt !== null || entry.owner !== owner) continue;
      entry.leaseUntil = leaseUntil;
      renewed++;
    }
    return renewed;
  }

  async release(owner: string, eventIds?: readonly string[]): Promise<number> {
    checkOwner(owner);
    const only = eventIds === undefined ? undefined : new Set(checkEventIds(eventIds));
    let released = 0;
    for (const e of this.entries.values()) {
      if (e.owner !== owner || e.deadAt !== null || (only !== undefined && !only.has(e.eventId))) continue;
      e.owner = null;
      e.leaseUntil = null;
      released++;
    }
    return released;
  }

  async status(now: number): Promise<OutboxStatus> {
    checkTime(now, 'now');
    return tallyOutboxStatus(this.entries.values(), now);
  }

  async listDeadLetters(query: OutboxDeadLetterQuery = {}): Promise<OutboxRecord[]> {
    const filter = checkDeadLetterFilter(query);
    const limit = query.limit === undefined ? 100 : checkPositiveInteger(query.limit, 'limit');
    const after = query.after === undefined ? undefined : checkEventId(query.after);
    const dead = [...this.entries.values()]
      .filter((e) => matchesDeadLetterFilter(filter, e))
      .sort((a, b) => a.deadAt! - b.deadAt! || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    let start = 0;
    if (after !== undefined) {
      const cursor = this.entries.get(after);
      if (cursor === undefined || cursor.deadAt === null) return [];
      start = dead.findIndex(
        (e) => e.deadAt! > cursor.deadAt! || (e.deadAt === cursor.deadAt && e.eventId > cursor.eventId),
      );
      if (start === -1) return [];
    }
    return dead.slice(start, start + limit).map(recordOf);
  }

  async requeueDeadLetters(filter: OutboxDeadLetterFilter, now: number): Promise<number> {
    const checked = checkDeadLetterFilter(filter);
    checkTime(now, 'now');
    let replayed = 0;
    for (const e of this.entries.values()) {
      if (!matchesDeadLetterFilter(checked, e)) continue;
      Object.assign(e, {
        attempts: 0,
        nextAttemptAt: now,
        owner: null,
        leaseUntil: null,
        deadAt: null,
        lastError: null,
      });
      replayed++;
    }
    if (replayed > 0) queueMicrotask(() => this.listeners.forEach((listener) => listener()));
    return replayed;
  }

  async purgeDeadLetters(filter: OutboxDeadLetterFilter): Promise<number> {
    const checked = checkDeadLetterFilter(filter);
    let purged = 0;
    for (const e of [...this.entries.values()]) {
      if (!matchesDeadLetterFilter(checked, e)) continue;
      this.entries.delete(e.eventId);
      purged++;
    }
    return purged;
  }

  replayDeadLetters(eventIds: readonly string[], now: number): Promise<number> {
    return this.requeueDeadLetters({ eventIds }, now);
  }

  async watch(listener: () => void): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    return async () => void this.listeners.delete(listener);
  }
}
