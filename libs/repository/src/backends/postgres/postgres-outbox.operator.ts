import type { Pool, QueryResult } from 'pg';
import {
  checkEventId,
  checkEventIds,
  checkPositiveInteger,
  checkText,
  checkTime,
} from '../../outbox/outbox-arguments.js';
import type { OutboxDeadLetterQuery, OutboxRecord, OutboxStatus } from '../../outbox/outbox.interfaces.js';
import { toRecord, type Row } from './postgres-outbox.rows.js';
import { RETURNED, type PostgresOutboxTable } from './postgres-outbox.table.js';
import { OutboxWakeUp } from './postgres-outbox.wake.js';

// The operator's side of PostgresOutboxStore: the readiness check's counts, and dead letters
// listed and replayed.

/** `statusPool`: where the count runs when not where the store's statements do (see PostgresOutboxStoreOptions). */
export async function outboxStatus(
  table: PostgresOutboxTable,
  statusPool: Pool | undefined,
  now: number,
): Promise<OutboxStatus> {
  checkTime(now, 'now');
  const text = `SELECT count(*) FILTER (WHERE dead_at IS NULL) AS pending, min(stored_at) FILTER (WHERE dead_at IS NULL) AS oldest,
              count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead FROM ${table.name}`;
  type StatusRow = { pending: string; oldest: string | null; dead: string };
  let result: QueryResult<StatusRow>;
  if (statusPool === undefined) result = await table.query<StatusRow>(text, []);
  else {
    await table.ensure();
    result = await statusPool.query<StatusRow>(text);
  }
  const row = result.rows[0];
  return {
    pending: Number(row.pending),
    oldestPendingAgeMs: row.oldest === null ? null : now - Number(row.oldest),
    deadLetters: Number(row.dead),
  };
}

export async function listDeadLetters(
  table: PostgresOutboxTable,
  query: OutboxDeadLetterQuery = {},
): Promise<OutboxRecord[]> {
  const limit = query.limit === undefined ? 100 : checkPositiveInteger(query.limit, 'limit');
  const aggregate = query.aggregate === undefined ? null : checkText(query.aggregate, 'aggregate');
  const after = query.after === undefined ? null : checkEventId(query.after);
  const t = table.name;
  const result = await table.query<Row>(
    `SELECT ${RETURNED('d')} FROM ${t} d WHERE d.dead_at IS NOT NULL AND ($2::text IS NULL OR d.aggregate = $2)
       AND ($3::text IS NULL OR (d.dead_at, d.event_id COLLATE "C") > (SELECT c.dead_at, c.event_id COLLATE "C" FROM ${t} c WHERE c.event_id = $3 AND c.dead_at IS NOT NULL))
     ORDER BY d.dead_at, d.event_id COLLATE "C" LIMIT $1`,
    [limit, aggregate, after],
  );
  return result.rows.map(toRecord);
}

/**
 * Makes the dead letters pending again and wakes the relays: by a NOTIFY in the statement when
 * its commit cannot be observed (see OutboxWakeUp), else once it is done.
 */
export async function replayDeadLetters(
  table: PostgresOutboxTable,
  wake: { pool: Pool; channel: string | undefined; wakeUp: OutboxWakeUp },
  eventIds: readonly string[],
  now: number,
): Promise<number> {
  const ids = checkEventIds(eventIds);
  checkTime(now, 'now');
  if (ids.length === 0) return 0;
  const inStatement = wake.channel !== undefined && OutboxWakeUp.mustNotifyInStatement(wake.pool);
  const result = await table.query(
    `UPDATE ${table.name} SET attempts = 0, next_attempt_at = $2, owner = NULL, lease_until = NULL, dead_at = NULL, last_error = NULL
     WHERE event_id = ANY($1::text[]) AND dead_at IS NOT NULL RETURNING 1${inStatement ? `, pg_notify($3, '')` : ''}`,
    inStatement ? [ids, now, wake.channel] : [ids, now],
  );
  const replayed = result.rowCount ?? 0;
  if (replayed > 0 && !inStatement) wake.wakeUp.afterWrite();
  return replayed;
}
