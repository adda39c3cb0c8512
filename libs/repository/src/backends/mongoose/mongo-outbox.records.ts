// How a document carries its outbox (MongooseRepository with `outbox: true` writes it,
// MongoOutboxStore reads and changes it). Every field is written with plain `$set`, `$unset`
// and `$inc` on dotted paths, never `$push`/`$pull`/`$[]`/arrayFilters: those are not needed,
// and the MongoDB-wire emulator the tests run on lacks them.
//
//   _outbox       { <eventId>: OutboxEntry }  pending events and dead letters of this document
//   _outboxRev    a counter every write and every store change increments: a store change is a
//                 compare-and-set on it, so it never overwrites what a concurrent write added
//   _outboxNext   a time no later than the earliest moment the document may have a claimable
//                 event; absent when nothing is pending (a sparse index on it finds the backlog)
//   _outboxDead   the number of dead letters in the document; absent when none
//   _deleted      true on a removed aggregate whose PURGE (or another event) is still stored:
//                 a tombstone, invisible to reads, deleted once its outbox is empty
import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { RepositoryError } from '../../errors.js';
import { firstDueAt } from '../../outbox/outbox-arguments.js';
import type { OutboxRecord } from '../../outbox/outbox.interfaces.js';

export const OUTBOX = '_outbox';
export const OUTBOX_REV = '_outboxRev';
export const OUTBOX_NEXT = '_outboxNext';
export const OUTBOX_DEAD = '_outboxDead';
export const DELETED = '_deleted';

/** The fields the repository and the store own on an outbox document (a subclass's toDocument may not use them). */
export const OUTBOX_FIELDS: readonly string[] = [OUTBOX, OUTBOX_REV, OUTBOX_NEXT, OUTBOX_DEAD, DELETED];

/** One stored event and its delivery state, as it sits under `_outbox.<eventId>`. */
export interface OutboxEntry {
  eventId: string;
  event: DataSyncEvent;
  version: number;
  /** Its position among the events of its write (one write may carry several of one version). */
  seq: number;
  /**
   * How many times the aggregate was inserted anew over a tombstone since this event was
   * written: events of an earlier life come first, whatever their versions (which restart).
   */
  older?: number;
  storedAt: number;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  deadAt: number | null;
  owner: string | null;
  leaseUntil: number;
}

/** An outbox document as the store reads it. */
export interface OutboxDocument {
  _id: AggregateId;
  [OUTBOX]?: Record<string, OutboxEntry>;
  [OUTBOX_REV]?: number;
  [OUTBOX_NEXT]?: number;
  [OUTBOX_DEAD]?: number;
  [DELETED]?: boolean;
  [field: string]: unknown;
}

// An event id becomes part of a field path: only characters that cannot form an operator,
// a path separator or anything else MongoDB reads specially. UUIDs pass.
const EVENT_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function isStorableEventId(value: unknown): value is string {
  return typeof value === 'string' && EVENT_ID.test(value);
}

/** The entries a write adds, stamped `storedAt`; refuses an event whose id cannot be a field name, or whose `availableAt` is no time. */
export function newEntries(events: readonly DataSyncEvent[], storedAt: number): OutboxEntry[] {
  const due = firstDueAt(events, storedAt);
  return events.map((event, seq) => {
    const eventId = (event as { eventId?: unknown }).eventId;
    if (!isStorableEventId(eventId)) {
      throw new RepositoryError(
        `The data-sync event ${event.type} ${event.aggregate} ${JSON.stringify(event.id)} v${event.version} has no usable eventId ` +
          `(${JSON.stringify(eventId)}; letters, digits, '-' and '_' only): nothing was written`,
      );
    }
    return {
      eventId,
      event: { ...event },
      version: event.version,
      seq,
      storedAt,
      attempts: 0,
      nextAttemptAt: due,
      lastError: null,
      deadAt: null,
      owner: null,
      leaseUntil: 0,
    };
  });
}

/** `$set` paths that add entries to a document's outbox. */
export function entryPaths(entries: readonly OutboxEntry[]): Record<string, OutboxEntry> {
  const paths: Record<string, OutboxEntry> = {};
  for (const entry of entries) paths[`${OUTBOX}.${entry.eventId}`] = entry;
  return paths;
}

function compareEntries(a: OutboxEntry, b: OutboxEntry): number {
  return (
    (b.older ?? 0) - (a.older ?? 0) ||
    a.version - b.version ||
    a.seq - b.seq ||
    a.storedAt - b.storedAt ||
    (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0)
  );
}

/** Every entry of a document, in delivery order. */
export function entriesOf(document: OutboxDocument): OutboxEntry[] {
  return Object.values(document[OUTBOX] ?? {}).sort(compareEntries);
}

/** The pending entries (not dead letters) in delivery order: the first is the head. */
export function pendingOf(document: OutboxDocument): OutboxEntry[] {
  return entriesOf(document).filter((entry) => entry.deadAt === null);
}

/** True when an instance with these pending entries may be claimed at `now`: its head is due and no entry is under a live lease. */
export function isClaimable(pending: readonly OutboxEntry[], now: number): boolean {
  return (
    pending.length > 0 &&
    pending[0].nextAttemptAt <= now &&
    pending.every((entry) => entry.owner === null || entry.leaseUntil <= now)
  );
}

/** `_outboxNext` for a document whose pending entries are these: when it may next be claimable, or undefined when none is pending. */
export function nextHint(pending: readonly OutboxEntry[]): number | undefined {
  if (pending.length === 0) return undefined;
  let next = pending[0].nextAttemptAt;
  for (const entry of pending) if (entry.owner !== null && entry.leaseUntil > next) next = entry.leaseUntil;
  return next;
}

export function toRecord(entry: OutboxEntry, aggregateId: AggregateId): OutboxRecord {
  return {
    eventId: entry.eventId,
    aggregate: entry.event.aggregate,
    aggregateId,
    version: entry.version,
    event: entry.event,
    storedAt: entry.storedAt,
    attempts: entry.attempts,
    nextAttemptAt: entry.nextAttemptAt,
    lastError: entry.lastError,
    deadAt: entry.deadAt,
  };
}

/** The document's own fields, without the outbox's (what a subclass's toAggregate sees). */
export function withoutOutboxFields<D extends Record<string, unknown>>(document: D): D {
  const copy: Record<string, unknown> = { ...document };
  for (const field of OUTBOX_FIELDS) delete copy[field];
  return copy as D;
}
