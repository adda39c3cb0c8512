import type { Pool, QueryResult } from 'pg';
import {
  checkDeadLetterFilter,
  checkEventId,
  checkPositiveInteger,
  checkTime,
  type CheckedDeadLetterFilter,
} from '../../outbox/outbox-arguments.js';
import type {
  OutboxDeadLetterFilter,
  OutboxDeadLetterQuery,
  OutboxRecord,
  OutboxStatus,
} from '../../outbox/outbox.interfaces.js';
import { toRecord, type Row } from './postgres-outbox.rows.js';
import { RETURNED, type PostgresOutboxTable } from './postgres-outbox.table.js';
import { OutboxWakeUp } from './postgres-outbox.wake.js';

// The operator's side of PostgresOutboxStore: the readiness check's counts, and dead letters
// listed, requeued and purged by filter.

/** `statusPool`: where the count runs when not where the store's statements do (see PostgresOutboxStoreOptions). */
export async function outboxStatus(
  table: PostgresOutboxTable,
  statusPool: Pool | undefined,
  now: number,
): Promise<OutboxStatus> {
  checkTime(now, 'now');
  // Since when each pending event waits (see OutboxStore.status): one never attempted, from when it became due.
  const since = 'CASE WHEN attempts = 0 THEN GREATEST(stored_at, next_attempt_at) ELSE stored_at END';
  const text = `SELECT count(*) FILTER (WHERE dead_at IS NULL) AS pending,
              min(${since}) FILTER (WHERE dead_at IS NULL AND ${since} <= $1::bigint) AS oldest,
              count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead, min(dead_at) AS oldest_dead FROM ${table.name}`;
  type StatusRow = { pending: string; oldest: string | null; dead: string; oldest_dead: string | null };
  let result: QueryResult<StatusRow>;
  if (statusPool === undefined) result = await table.query<StatusRow>(text, [now]);
  else {
    await table.ensure();
    result = await statusPool.query<StatusRow>(text, [now]);
  }
  const row = result.rows[0];
  return {
    pending: Number(row.pending),
    oldestPendingAgeMs: row.oldest === null ? null : now - Number(row.oldest),
    deadLetters: Number(row.dead),
    oldestDeadLetterAgeMs: row.oldest_dead === null ? null : now - Number(row.oldest_dead),
  };
}

export async function listDeadLetters(
  table: PostgresOutboxTable,
  query: OutboxDeadLetterQuery = {},
): Promise<OutboxRecord[]> {
  const filter = checkDeadLetterFilter(query);
  const limit = query.limit === undefined ? 100 : checkPositiveInteger(query.limit, 'limit');
  const after = query.after === undefined ? null : checkEventId(query.after);
  const t = table.name;
  const result = await table.query<Row>(
    `SELECT ${RETURNED('d')} FROM ${t} d WHERE ${MATCHES('d', 3)}
       AND ($2::text IS NULL OR (d.dead_at, d.event_id COLLATE "C") > (SELECT c.dead_at, c.event_id COLLATE "C" FROM ${t} c WHERE c.event_id = $2 AND c.dead_at IS NOT NULL))
     ORDER BY d.dead_at, d.event_id COLLATE "C" LIMIT $1`,
    [limit, after, ...filterValues(filter)],
  );
  return result.rows.map(toRecord);
}

/**
 * The condition of a dead letter matching a filter, on the row `alias`, its five values bound
 * from `$first` on (filterValues: null for a field not given). Values only: nothing of a filter
 * becomes SQL.
 */
export function MATCHES(alias: string, first: number): string {
  const d = alias;
  const [type, aggregate, aggregateId, deadBefore, eventIds] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
  return (
    `${d}.dead_at IS NOT NULL AND (${type}::text IS NULL OR ${d}.payload->>'type' = ${type}::text)` +
    ` AND (${aggregate}::text IS NULL OR ${d}.aggregate = ${aggregate}::text)` +
    ` AND (${aggregateId}::text IS NULL OR ${d}.aggregate_id = ${aggregateId}::text)` +
    ` AND (${deadBefore}::bigint IS NULL OR ${d}.dead_at < ${deadBefore}::bigint)` +
    ` AND (${eventIds}::text[] IS NULL OR ${d}.event_id = ANY(${eventIds}::text[]))`
  );
}

export function filterValues(filter: CheckedDeadLetterFilter): unknown[] {
  return [filter.type, filter.aggregate, filter.aggregateId, filter.deadBefore, filter.eventIds];
}

/** Deletes the dead letters matching `filter`; resolves how many. */
export async function purgeDeadLetters(table: PostgresOutboxTable, filter: OutboxDeadLetterFilter): Promise<number> {
  const checked = checkDeadLetterFilter(filter);
  const result = await table.query(`DELETE FROM ${table.name} d WHERE ${MATCHES('d', 1)}`, filterValues(checked));
  return result.rowCount ?? 0;
}

/**
 * Makes the dead letters matching `filter` pending again and wakes the relays: by a NOTIFY in
 * the statement when its commit cannot be observed (see OutboxWakeUp), else once it is done.
 */
export async function requeueDeadLetters(
  table: PostgresOutboxTable,
  wake: { pool: Pool; channel: string | undefined; wakeUp: OutboxWakeUp },
  filter: OutboxDeadLetterFilter,
  now: number,
): Promise<number> {
  const checked = checkDeadLetterFilter(filter);
  checkTime(now, 'now');
  if (checked.eventIds?.length === 0) return 0;
  const inStatement = wake.channel !== undefined && OutboxWakeUp.mustNotifyInStatement(wake.pool);
  const result = await table.query(
    `UPDATE ${table.name} d SET attempts = 0, next_attempt_at = $1, owner = NULL, lease_until = NULL, dead_at = NULL, last_error = NULL
     WHERE ${MATCHES('d', 2)} RETURNING 1${inStatement ? `, pg_notify($7, '')` : ''}`,
    inStatement ? [now, ...filterValues(checked), wake.channel] : [now, ...filterValues(checked)],
  );
  const replayed = result.rowCount ?? 0;
  if (replayed > 0 && !inStatement) wake.wakeUp.afterWrite();
  return replayed;
}
