import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import type { OutboxRecord } from '../../outbox/outbox.interfaces.js';

/** A row of the outbox table as node-postgres returns it (bigint columns as strings). */
export interface Row {
  seq: string;
  event_id: string;
  aggregate: string;
  aggregate_id: string;
  version: string;
  payload: DataSyncEvent;
  stored_at: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  dead_at: string | null;
  owner: string | null;
  lease_until: string | null;
}

/** A row as the relay sees it. */
export function toRecord(row: Row): OutboxRecord {
  const event = Object.freeze(row.payload);
  return {
    eventId: row.event_id,
    aggregate: row.aggregate,
    aggregateId: event.id as AggregateId,
    version: Number(row.version),
    event,
    storedAt: Number(row.stored_at),
    attempts: row.attempts,
    nextAttemptAt: Number(row.next_attempt_at),
    lastError: row.last_error,
    deadAt: row.dead_at === null ? null : Number(row.dead_at),
  };
}
