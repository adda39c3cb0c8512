import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import type { OutboxClaim, OutboxRecord } from './outbox.interfaces.js';

/** An event a store holds in this process (the in-memory store, the WAL outbox's buffer), with its lease. */
export interface HeldOutboxEvent {
  /** Order of arrival: ties of `version`, and of `storedAt` between instances, go by it. */
  readonly seq: number;
  readonly eventId: string;
  readonly aggregate: string;
  readonly aggregateId: AggregateId;
  readonly version: number;
  readonly event: DataSyncEvent;
  readonly storedAt: number;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  deadAt: number | null;
  owner: string | null;
  leaseUntil: number | null;
}

/** OutboxStore.claim over held events (its rules, see there): leases them in place and answers the claims. */
export function claimHeld(
  entries: Iterable<HeldOutboxEvent>,
  owner: string,
  limit: number,
  leaseMs: number,
  now: number,
): OutboxClaim[] {
  const claimable: HeldOutboxEvent[][] = [];
  for (const events of pendingByInstance(entries).values()) {
    if (events[0].nextAttemptAt > now) continue;
    if (events.some((e) => e.leaseUntil !== null && e.leaseUntil > now)) continue;
    claimable.push(events);
  }
  claimable.sort((a, b) => a[0].storedAt - b[0].storedAt || a[0].seq - b[0].seq);
  const leaseUntil = now + leaseMs;
  return claimable.slice(0, limit).map((events) => {
    for (const e of events) {
      e.owner = owner;
      e.leaseUntil = leaseUntil;
    }
    const [head] = events;
    return {
      aggregate: head.aggregate,
      aggregateId: head.aggregateId,
      owner,
      leaseUntil,
      events: events.map(recordOf),
    };
  });
}

/** A held event as the port returns it. */
export function recordOf(e: HeldOutboxEvent): OutboxRecord {
  return {
    eventId: e.eventId,
    aggregate: e.aggregate,
    aggregateId: e.aggregateId,
    version: e.version,
    event: e.event,
    storedAt: e.storedAt,
    attempts: e.attempts,
    nextAttemptAt: e.nextAttemptAt,
    lastError: e.lastError,
    deadAt: e.deadAt,
  };
}

/** Pending (not dead) events grouped by instance, each group in order (version, then arrival). */
function pendingByInstance(entries: Iterable<HeldOutboxEvent>): Map<string, HeldOutboxEvent[]> {
  const byInstance = new Map<string, HeldOutboxEvent[]>();
  for (const e of entries) {
    if (e.deadAt !== null) continue;
    const key = `${e.aggregate}\u0000${typeof e.aggregateId}\u0000${String(e.aggregateId)}`;
    const list = byInstance.get(key);
    if (list === undefined) byInstance.set(key, [e]);
    else list.push(e);
  }
  for (const list of byInstance.values()) list.sort((a, b) => a.version - b.version || a.seq - b.seq);
  return byInstance;
}
