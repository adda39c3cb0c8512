// Argument checks shared by the OutboxStore implementations: bad input is refused before a
// store changes anything (and before a value could reach a query as anything but a string or
// a number); and the few rules the stores that filter in code share.
import type { OutboxStatus } from './outbox.interfaces.js';

export function checkOwner(owner: unknown): string {
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > 200) {
    throw new TypeError(`outbox: owner must be a non-empty string of at most 200 characters, got ${describe(owner)}`);
  }
  return owner;
}

export function checkTime(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(
      `outbox: ${what} must be a time in epoch milliseconds (a non-negative integer), got ${describe(value)}`,
    );
  }
  return value;
}

export function checkPositiveInteger(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`outbox: ${what} must be a positive integer, got ${describe(value)}`);
  }
  return value;
}

export function checkEventIds(ids: unknown, what = 'eventIds'): string[] {
  if (!Array.isArray(ids)) throw new TypeError(`outbox: ${what} must be an array of event ids, got ${describe(ids)}`);
  for (const id of ids) {
    if (typeof id !== 'string' || id.length === 0 || id.length > 200)
      throw new TypeError(`outbox: every event id must be a non-empty string, got ${describe(id)}`);
  }
  return ids as string[];
}

export function checkEventId(id: unknown): string {
  return checkEventIds([id], 'eventId')[0];
}

export function checkText(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`outbox: ${what} must be a string, got ${describe(value)}`);
  return value;
}

/** A dead-letter filter checked (OutboxDeadLetterFilter): every field its expected type, ids as text. */
export interface CheckedDeadLetterFilter {
  type: string | null;
  aggregate: string | null;
  aggregateId: string | null;
  deadBefore: number | null;
  eventIds: string[] | null;
}

export function checkDeadLetterFilter(filter: unknown): CheckedDeadLetterFilter {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter))
    throw new TypeError(
      `outbox: a dead-letter filter is an object { type?, aggregate?, aggregateId?, deadBefore?, eventIds? } ({} for all), got ${describe(filter)}`,
    );
  const f = filter as Record<string, unknown>;
  const text = (key: string): string | null => {
    const value = f[key];
    if (value === undefined) return null;
    if (typeof value !== 'string' || value.length === 0)
      throw new TypeError(`outbox: ${key} must be a non-empty string, got ${describe(value)}`);
    return value;
  };
  let aggregateId: string | null = null;
  if (f.aggregateId !== undefined) {
    const id = f.aggregateId;
    if (!((typeof id === 'string' && id.length > 0) || (typeof id === 'number' && Number.isFinite(id))))
      throw new TypeError(`outbox: aggregateId must be a non-empty string or a number, got ${describe(id)}`);
    if (f.aggregate === undefined)
      throw new TypeError('outbox: aggregateId needs aggregate (the name of its aggregate)');
    aggregateId = String(id);
  }
  return {
    type: text('type'),
    aggregate: text('aggregate'),
    aggregateId,
    deadBefore: f.deadBefore === undefined ? null : checkTime(f.deadBefore, 'deadBefore'),
    eventIds: f.eventIds === undefined ? null : checkEventIds(f.eventIds),
  };
}

/** True when a dead letter matches a checked filter (the stores that filter in code). */
export function matchesDeadLetterFilter(
  filter: CheckedDeadLetterFilter,
  letter: { eventId: string; event: { type: string; aggregate: string; id: unknown }; deadAt: number | null },
): boolean {
  return (
    letter.deadAt !== null &&
    (filter.type === null || letter.event.type === filter.type) &&
    (filter.aggregate === null || letter.event.aggregate === filter.aggregate) &&
    (filter.aggregateId === null || String(letter.event.id) === filter.aggregateId) &&
    (filter.deadBefore === null || letter.deadAt < filter.deadBefore) &&
    (filter.eventIds === null || filter.eventIds.includes(letter.eventId))
  );
}

/**
 * When a write's events are first due: `storedAt`, or the latest `availableAt` among them — one
 * write's events are delivered together, so none is due before all are. Throws (before the write
 * changes anything) for an `availableAt` that is not a time.
 */
export function firstDueAt(events: readonly { availableAt?: unknown }[], storedAt: number): number {
  let due = storedAt;
  for (const event of events)
    if (event.availableAt !== undefined) due = Math.max(due, checkTime(event.availableAt, 'event.availableAt'));
  return due;
}

/**
 * Since when a pending event waits (OutboxStore.status): from its write, or — never attempted
 * (held until `availableAt`, or requeued) — from when it became due.
 */
export function waitingSince(entry: { attempts: number; storedAt: number; nextAttemptAt: number }): number {
  return entry.attempts === 0 ? Math.max(entry.storedAt, entry.nextAttemptAt) : entry.storedAt;
}

/** What OutboxStore.status counts of one stored event. */
export interface OutboxTallied {
  readonly attempts: number;
  readonly storedAt: number;
  readonly nextAttemptAt: number;
  readonly deadAt: number | null;
}

/**
 * OutboxStore.status over events a store holds in memory or has read: pending ones, the longest
 * wait of a due one (see waitingSince; one held beyond `now` does not count), dead letters and
 * how long ago the oldest died.
 */
export function tallyOutboxStatus(entries: Iterable<OutboxTallied>, now: number): OutboxStatus {
  let pending = 0;
  let deadLetters = 0;
  let oldest: number | null = null;
  let oldestDead: number | null = null;
  for (const entry of entries) {
    if (entry.deadAt !== null) {
      deadLetters++;
      if (oldestDead === null || entry.deadAt < oldestDead) oldestDead = entry.deadAt;
      continue;
    }
    pending++;
    const since = waitingSince(entry);
    if (since <= now && (oldest === null || since < oldest)) oldest = since;
  }
  return {
    pending,
    oldestPendingAgeMs: oldest === null ? null : now - oldest,
    deadLetters,
    oldestDeadLetterAgeMs: oldestDead === null ? null : now - oldestDead,
  };
}

/** The message kept as `lastError`: an Error's message (its name when it has none), bounded. */
export function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

function describe(value: unknown): string {
  try {
    return typeof value === 'string'
      ? JSON.stringify(value)
      : typeof value === 'object' && value !== null
        ? JSON.stringify(value)
        : String(value);
  } catch {
    return String(value);
  }
}
