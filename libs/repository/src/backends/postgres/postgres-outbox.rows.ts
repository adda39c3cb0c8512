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
  payload: Payload;
  stored_at: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  dead_at: string | null;
  owner: string | null;
  lease_until: string | null;
}

/**
 * What the payload column holds of an event: all of it but what the row's columns hold already
 * (event id, aggregate, version; the id too when it is a string, as the `aggregate_id` column
 * holds it), so that every write stores fewer bytes. A row written before holds the whole
 * event, which reads back the same.
 */
type Payload = Partial<DataSyncEvent> & { type: DataSyncEvent['type'] };

/** The payload column's JSON for `event` (see Payload). */
export function payloadOf(event: DataSyncEvent): string {
  const { eventId: _eventId, aggregate: _aggregate, version: _version, id, ...rest } = event;
  return JSON.stringify(typeof id === 'string' ? rest : { ...rest, id });
}

/** The event a row stores, field by field as its write collected it (in the factories' key order). */
export function eventOf(
  row: Pick<Row, 'event_id' | 'aggregate' | 'aggregate_id' | 'version' | 'payload'>,
): DataSyncEvent {
  const payload = row.payload;
  if (payload.eventId !== undefined) return Object.freeze(payload as DataSyncEvent);
  const { type, id, ...rest } = payload;
  return Object.freeze({
    type,
    eventId: row.event_id,
    aggregate: row.aggregate,
    id: id ?? row.aggregate_id,
    version: Number(row.version),
    ...rest,
  } as DataSyncEvent);
}

/** A row as the relay sees it. */
export function toRecord(row: Row): OutboxRecord {
  const event = eventOf(row);
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
