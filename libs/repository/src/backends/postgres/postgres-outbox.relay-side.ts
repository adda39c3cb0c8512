import {
  checkEventId,
  checkEventIds,
  checkOwner,
  checkPositiveInteger,
  checkText,
  checkTime,
} from '../../outbox/outbox-arguments.js';
import type {
  OutboxClaim,
  OutboxClaimRequest,
  OutboxFailure,
  OutboxFailureOutcome,
} from '../../outbox/outbox.interfaces.js';
import { toRecord, type Row } from './postgres-outbox.rows.js';
import { RETURNED, type PostgresOutboxTable } from './postgres-outbox.table.js';

// The relay's side of PostgresOutboxStore (see OutboxStore): claim, ack, fail, renew, release.
// Every call that names event ids also names the owner: the claimed rows' index on
// (owner, event_id) finds each at once.

/**
 * The head of each instance is locked SKIP LOCKED (another claim holding it skips the instance);
 * a concurrent claim that committed first is seen by the lock's re-check of the head's lease.
 * Every pending row of a locked instance is then leased in the same statement.
 */
export async function claimEvents(table: PostgresOutboxTable, request: OutboxClaimRequest): Promise<OutboxClaim[]> {
  const owner = checkOwner(request?.owner);
  const limit = checkPositiveInteger(request.limit, 'limit');
  const leaseMs = checkPositiveInteger(request.leaseMs, 'leaseMs');
  const now = checkTime(request.now, 'now');
  const t = table.name;
  const result = await table.query<Row & { head_seq: string; head_stored_at: string }>(
    `WITH heads AS (
       SELECT DISTINCT ON (aggregate, aggregate_id) seq FROM ${t}
       WHERE dead_at IS NULL ORDER BY aggregate, aggregate_id, version, seq
     ), due AS (
       SELECT o.seq, o.aggregate, o.aggregate_id, o.stored_at FROM ${t} o
       WHERE o.seq IN (SELECT seq FROM heads) AND o.dead_at IS NULL AND o.next_attempt_at <= $1
         AND (o.lease_until IS NULL OR o.lease_until <= $1)
         AND NOT EXISTS (SELECT 1 FROM ${t} x WHERE x.aggregate = o.aggregate AND x.aggregate_id = o.aggregate_id
                         AND x.dead_at IS NULL AND x.lease_until > $1)
       ORDER BY o.stored_at, o.seq LIMIT $2
       FOR UPDATE OF o SKIP LOCKED
     )
     UPDATE ${t} o SET owner = $3, lease_until = $4
     FROM due d WHERE o.aggregate = d.aggregate AND o.aggregate_id = d.aggregate_id AND o.dead_at IS NULL
     RETURNING ${RETURNED('o')}, d.seq AS head_seq, d.stored_at AS head_stored_at`,
    [now, limit, owner, now + leaseMs],
  );
  const byHead = new Map<string, { order: [number, number]; rows: Row[] }>();
  for (const row of result.rows) {
    const group = byHead.get(row.head_seq) ?? {
      order: [Number(row.head_stored_at), Number(row.head_seq)] as [number, number],
      rows: [],
    };
    group.rows.push(row);
    byHead.set(row.head_seq, group);
  }
  return [...byHead.values()]
    .sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1])
    .map(({ rows }) => {
      rows.sort((a, b) => Number(a.version) - Number(b.version) || Number(a.seq) - Number(b.seq));
      const events = rows.map(toRecord);
      return {
        aggregate: events[0].aggregate,
        aggregateId: events[0].aggregateId,
        owner,
        leaseUntil: now + leaseMs,
        events,
      };
    });
}

export async function ackEvents(
  table: PostgresOutboxTable,
  owner: string,
  eventIds: readonly string[],
): Promise<number> {
  checkOwner(owner);
  const ids = checkEventIds(eventIds);
  if (ids.length === 0) return 0;
  const result = await table.query(
    `DELETE FROM ${table.name} WHERE event_id = ANY($1::text[]) AND owner = $2 AND dead_at IS NULL`,
    [ids, owner],
    true,
  );
  return result.rowCount ?? 0;
}

/** The failed event's attempt counted (a dead letter at `maxAttempts`), and every lease of the owner on its instance ended. */
export async function failEvent(
  table: PostgresOutboxTable,
  owner: string,
  eventId: string,
  failure: OutboxFailure,
): Promise<OutboxFailureOutcome | null> {
  checkOwner(owner);
  checkEventId(eventId);
  const error = checkText(failure?.error, 'failure.error');
  const retryAt = checkTime(failure.retryAt, 'failure.retryAt');
  const maxAttempts = checkPositiveInteger(failure.maxAttempts, 'failure.maxAttempts');
  const now = checkTime(failure.now, 'failure.now');
  const t = table.name;
  const result = await table.query<{ attempts: number; dead_at: string | null; next_attempt_at: string }>(
    `WITH target AS (
       SELECT seq, aggregate, aggregate_id, attempts + 1 AS attempts FROM ${t}
       WHERE event_id = $1 AND owner = $2 AND dead_at IS NULL FOR UPDATE
     ), failed AS (
       UPDATE ${t} o SET attempts = g.attempts, last_error = $3,
         dead_at = CASE WHEN g.attempts >= $4 THEN $5::bigint ELSE NULL END,
         next_attempt_at = CASE WHEN g.attempts >= $4 THEN o.next_attempt_at ELSE $6::bigint END,
         owner = NULL, lease_until = NULL
       FROM target g WHERE o.seq = g.seq
       RETURNING o.attempts, o.dead_at, o.next_attempt_at
     ), released AS (
       UPDATE ${t} o SET owner = NULL, lease_until = NULL FROM target g
       WHERE o.aggregate = g.aggregate AND o.aggregate_id = g.aggregate_id AND o.owner = $2 AND o.seq <> g.seq
       RETURNING 1
     )
     SELECT f.*, (SELECT count(*) FROM released) AS released FROM failed f`,
    [eventId, owner, error, maxAttempts, now, retryAt],
  );
  if (result.rows.length === 0) return null;
  const row = result.rows[0];
  const dead = row.dead_at !== null;
  return { attempts: row.attempts, dead, nextAttemptAt: dead ? null : Number(row.next_attempt_at) };
}

export async function renewLeases(
  table: PostgresOutboxTable,
  owner: string,
  eventIds: readonly string[],
  leaseUntil: number,
): Promise<number> {
  checkOwner(owner);
  const ids = checkEventIds(eventIds);
  checkTime(leaseUntil, 'leaseUntil');
  if (ids.length === 0) return 0;
  // A claim that takes an expired lease over sets its own owner in the same statement: once
  // it committed, this matches nothing; while it runs, the row lock orders the two.
  const result = await table.query(
    `UPDATE ${table.name} SET lease_until = $3 WHERE event_id = ANY($1::text[]) AND owner = $2 AND dead_at IS NULL`,
    [ids, owner, leaseUntil],
    true,
  );
  return result.rowCount ?? 0;
}

export async function releaseLeases(
  table: PostgresOutboxTable,
  owner: string,
  eventIds?: readonly string[],
): Promise<number> {
  checkOwner(owner);
  const ids = eventIds === undefined ? null : checkEventIds(eventIds);
  const result = await table.query(
    `UPDATE ${table.name} SET owner = NULL, lease_until = NULL WHERE owner = $1 AND dead_at IS NULL AND ($2::text[] IS NULL OR event_id = ANY($2::text[]))`,
    [owner, ids],
  );
  return result.rowCount ?? 0;
}
