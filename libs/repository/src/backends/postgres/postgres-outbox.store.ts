import type { Pool, QueryResult } from 'pg';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { RepositoryConfigurationError } from '../../errors.js';
import {
  guardPool,
  activeTransactionFor,
  outsideTransaction,
  PgSchema,
  preparedStatement,
  queryableFor,
  type PgPool,
  type PgResult,
} from '@ddd-kit/core/postgres';
import { listenOnChannel } from './postgres-outbox.listener.js';
import { OutboxWakeUp } from './postgres-outbox.wake.js';
import { eventOf, payloadOf, toRecord, type Row } from './postgres-outbox.rows.js';
import { quoteIdentifier, quoteTableName } from './postgres-sql.utils.js';
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
  OutboxDeadLetterQuery,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxLocalRelay,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from '../../outbox/outbox.interfaces.js';

export interface PostgresOutboxStoreOptions {
  /** The pool of the repositories whose writes store their events here (the same database). */
  pool: Pool;
  /** The outbox table, `name` or `schema.name` (default `ddd_kit_outbox`). */
  table?: string;
  /** Create the table and its indexes at start-up when missing (default true); `createTableStatement()` prints the DDL. */
  createTables?: boolean;
  /**
   * The LISTEN/NOTIFY channel relays of other processes are woken on after a write with events
   * committed, and `watch` listens to (default `ddd_kit_outbox`); `false`: no NOTIFY (relays
   * elsewhere find new events by polling alone; those of this process are woken all the same).
   * The NOTIFY is a statement of its own after the commit, never part of the writer's
   * transaction (see OutboxWakeUp).
   */
  notifyChannel?: string | false;
  /**
   * Where `status()` (the readiness check) runs its one query, when not on `pool`: a connection
   * of its own (RepositoryModule gives it one), so that requests holding every connection of
   * `pool` while they wait on another store do not make a healthy PostgreSQL look down.
   */
  statusPool?: Pool;
}

/** Every column of the table, for the start-up check of an existing one. */
const COLUMNS = [
  'seq',
  'event_id',
  'aggregate',
  'aggregate_id',
  'version',
  'payload',
  'stored_at',
  'attempts',
  'next_attempt_at',
  'last_error',
  'dead_at',
  'owner',
  'lease_until',
];

/**
 * The columns a record is read from, named rather than `*`: a prepared statement whose result
 * changed shape (a column added by a later version's migration) would fail on every connection
 * that prepared it.
 */
const RETURNED = (alias: string): string =>
  COLUMNS.filter((column) => column !== 'owner' && column !== 'lease_until')
    .map((column) => `${alias}.${column}`)
    .join(', ');

/** One SQL statement with its values (the shape PostgresRepository runs). */
interface Statement {
  name?: string;
  text: string;
  values?: readonly unknown[];
}

/** A repository's write joined with its events (see PostgresOutboxStore.joinWrite). */
export interface OutboxJoinedWrite {
  readonly statement: Statement;
  /** The statement ran and matched (its result): after the commit, the relays learn of the events. */
  wrote(result: PgResult): void;
}

/**
 * The claim a write stored for a relay of its process, as `claim` would have returned it: the
 * events read back from the JSON stored (what any other path delivers), version order kept.
 */
function handedOffClaim(
  owner: string,
  leaseUntil: number,
  storedAt: number,
  events: readonly DataSyncEvent[],
  values: readonly unknown[],
): OutboxClaim {
  const first = values.length - events.length * 5 - 3; // the events' values, then time, owner, lease
  const records = events.map((written, i): OutboxRecord => {
    const at = first + i * 5;
    const event = eventOf({
      event_id: values[at] as string,
      aggregate: values[at + 1] as string,
      aggregate_id: values[at + 2] as string,
      version: String(written.version),
      payload: JSON.parse(values[at + 4] as string),
    });
    return {
      eventId: event.eventId,
      aggregate: event.aggregate,
      aggregateId: event.id,
      version: written.version,
      event,
      storedAt,
      attempts: 0,
      nextAttemptAt: storedAt,
      lastError: null,
      deadAt: null,
    };
  });
  return { aggregate: records[0].aggregate, aggregateId: records[0].aggregateId, owner, leaseUntil, events: records };
}

/**
 * The outbox of PostgresRepository: one row per data-sync event in a table of the repositories'
 * database, inserted by the very statement that writes the aggregate's row
 * (`WITH w AS (<the conditional write> RETURNING 1) INSERT INTO outbox … SELECT … FROM w`), so
 * the events exist exactly when the write does — in its ambient transaction when there is one,
 * autocommitted with it otherwise — at the cost of no extra round trip.
 *
 * The table (every time an epoch-ms bigint from the application's clock):
 *   seq bigserial PRIMARY KEY, event_id text, aggregate text, aggregate_id text,
 *   version bigint, payload json (the event), stored_at, attempts, next_attempt_at,
 *   last_error, dead_at (null while pending), owner, lease_until (the claim).
 * It is lean for the write's sake, which inserts a row and its entries in two indexes (`seq`,
 * pending): with durable commits, every byte of WAL is flushed before the write returns. The
 * payload is `json` (kept as sent, not re-encoded as `jsonb` is; the store never queries it)
 * and holds only what the other columns do not (see postgres-outbox.rows.ts). Every call that
 * names event ids (ack, renew, fail, release) also names the owner: the claimed rows' index on
 * (owner, event_id) finds each at once, and a row enters it only when claimed, not when
 * written. A table made by an earlier version (`jsonb`, `event_id UNIQUE`) works as it is.
 * A claim locks each instance's head row `FOR UPDATE SKIP LOCKED` and leases every pending row
 * of the instance in the same statement: concurrent relays skip what another is claiming, and
 * the lease keeps it theirs after the statement; a lease that ran out is free again.
 * Delivered rows are deleted; dead letters stay until replayed (or deleted by hand).
 */
export class PostgresOutboxStore implements OutboxStore {
  readonly pool: Pool;
  private readonly statusPool: Pool | undefined;
  private readonly table: string;
  private readonly tableName: string;
  private readonly indexPrefix: string;
  private readonly schema: PgSchema;
  private readonly channel: string | undefined;
  private readonly wakeUp: OutboxWakeUp;
  /** build()'s texts by the write's text, then by shape (the number of events, NOTIFY, claim). */
  private readonly texts = new Map<string, Map<number, string>>();
  /** Relays of this process that take this store's writes as they commit (attachRelay). */
  private readonly relays = new Set<OutboxLocalRelay>();

  constructor(options: PostgresOutboxStoreOptions) {
    const pool = options?.pool;
    if (pool === undefined || pool === null || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
      throw new RepositoryConfigurationError('PostgresOutboxStore: pool must be a pg.Pool');
    }
    this.pool = guardPool(pool);
    this.statusPool = options.statusPool;
    this.tableName = options.table ?? 'ddd_kit_outbox';
    this.table = quoteTableName(this.tableName, 'PostgresOutboxStore: table');
    const bare = this.tableName.split('.').pop()!;
    this.indexPrefix = bare.slice(0, 40);
    if (options.createTables !== undefined && typeof options.createTables !== 'boolean')
      throw new RepositoryConfigurationError('PostgresOutboxStore: createTables must be a boolean');
    this.schema = new PgSchema(pool as unknown as PgPool, {
      owner: 'PostgresOutboxStore',
      create: options.createTables ?? true,
      tables: () => [{ name: this.table, ddl: [this.createTableStatement()], columns: COLUMNS }],
    });
    const channel = options.notifyChannel ?? 'ddd_kit_outbox';
    if (channel !== false) quoteIdentifier(channel, 'PostgresOutboxStore: notifyChannel');
    this.channel = channel === false ? undefined : channel;
    this.wakeUp = new OutboxWakeUp(pool, this.channel);
  }

  /** The DDL of the table and its indexes, for teams that migrate by hand. */
  createTableStatement(): string {
    const t = this.table;
    const p = this.indexPrefix;
    return (
      `CREATE TABLE IF NOT EXISTS ${t} (\n` +
      '  seq bigserial PRIMARY KEY,\n' +
      '  event_id text NOT NULL,\n' +
      '  aggregate text NOT NULL,\n' +
      '  aggregate_id text NOT NULL,\n' +
      '  version bigint NOT NULL,\n' +
      '  payload json NOT NULL,\n' +
      '  stored_at bigint NOT NULL,\n' +
      '  attempts integer NOT NULL DEFAULT 0,\n' +
      '  next_attempt_at bigint NOT NULL,\n' +
      '  last_error text,\n' +
      '  dead_at bigint,\n' +
      '  owner text,\n' +
      '  lease_until bigint\n' +
      ');\n' +
      `CREATE INDEX IF NOT EXISTS "${p}_pending_idx" ON ${t} (aggregate, aggregate_id, version, seq) WHERE dead_at IS NULL;\n` +
      `CREATE INDEX IF NOT EXISTS "${p}_owner_idx" ON ${t} (owner, event_id) WHERE owner IS NOT NULL;\n` +
      `CREATE INDEX IF NOT EXISTS "${p}_dead_idx" ON ${t} (dead_at, event_id) WHERE dead_at IS NOT NULL;`
    );
  }

  /** Creates the table (or, with `createTables: false`, checks it exists) before the first statement; a no-op once done. */
  async ensureTable(): Promise<void> {
    if (!this.schema.ready) await this.schema.ensure();
  }

  /** Every statement creating the table and its indexes, in order (for a migration). */
  schemaStatements(): string[] {
    return this.schema.statements();
  }

  /**
   * A PostgresRepository's write on `pool` with its events (see `withEvents`), once the table
   * exists; the store must be on the repository's own pool, so that events commit with the row.
   * The repository runs `statement`, then calls `wrote` with its result when it matched.
   *
   * With a relay of this process attached (attachRelay) that has room, and the write's commit
   * observable (autocommitted, or an ambient transaction with `afterCommit`), the statement
   * stores the events already claimed by that relay when their instance has no pending event,
   * and `wrote` hands the claim to the relay once committed. Otherwise the events are stored
   * unclaimed and `wrote` wakes the relays after the commit.
   */
  async joinWrite(
    pool: Pool,
    repository: string,
    write: Statement,
    events: readonly DataSyncEvent[],
  ): Promise<OutboxJoinedWrite> {
    if (events.length === 0) return { statement: write, wrote: () => undefined };
    if (this.pool !== pool) {
      throw new RepositoryConfigurationError(
        `${repository}: its outbox (PostgresOutboxStore) must use the repository's own pool, so that events commit in the same transaction as the row`,
      );
    }
    await this.ensureTable();
    const transaction = activeTransactionFor(pool);
    // A commit that cannot be observed: the statement carries its own NOTIFY (see OutboxWakeUp).
    if (transaction !== undefined && transaction.afterCommit === undefined)
      return { statement: this.withEvents(write, events, Date.now(), true), wrote: () => undefined };
    const relay = this.relayWithRoom(events);
    if (relay === undefined) return { statement: this.withEvents(write, events), wrote: this.wakeAfterWrite };
    const now = Date.now();
    const leaseUntil = relay.now() + relay.leaseMs;
    const statement = this.build(write, events, now, false, { owner: relay.owner, leaseUntil });
    return {
      statement,
      wrote: (result) => {
        if ((result.rows[0] as { claimed?: boolean } | undefined)?.claimed !== true) return this.wakeAfterWrite();
        // The relay's lane runs its store calls in no use case's transaction, whatever encloses this one.
        const handOff = () =>
          outsideTransaction(() => relay.take(handedOffClaim(relay.owner, leaseUntil, now, events, statement.values)));
        if (transaction === undefined) handOff();
        else transaction.afterCommit!(handOff);
      },
    };
  }

  /** Hands this store's claims to `relay` from now on (see OutboxStore.attachRelay). */
  attachRelay(relay: OutboxLocalRelay): () => void {
    this.relays.add(relay);
    return () => void this.relays.delete(relay);
  }

  /**
   * The events stored unclaimed: wakes the relays once committed — at once when autocommitted,
   * after the ambient transaction's commit otherwise (never after a rollback); those of other
   * processes only with a notify channel.
   */
  private readonly wakeAfterWrite = (): void => this.wakeUp.afterWrite();

  /** An attached relay that takes more now, when every event is of one instance (one write's are). */
  private relayWithRoom(events: readonly DataSyncEvent[]): OutboxLocalRelay | undefined {
    if (this.relays.size === 0) return undefined;
    const [{ aggregate, id }] = events;
    if (events.some((event) => event.aggregate !== aggregate || event.id !== id)) return undefined;
    for (const relay of this.relays) if (relay.hasRoom()) return relay;
    return undefined;
  }

  /**
   * The repository's conditional write extended to insert `events` in the same statement when
   * (and only when) it matched a row; its row count is then the number of events inserted.
   * Every value is a parameter; the write's own `$n` stay as they are. With `notify` (a
   * transaction whose commit cannot be observed) the statement also calls `pg_notify`, which
   * then holds PostgreSQL's notify lock through the writer's commit; otherwise the relays are
   * woken after the commit (see joinWrite). The text depends only on the write's and the number
   * of events, so it is a prepared statement.
   */
  withEvents(write: Statement, events: readonly DataSyncEvent[], now: number = Date.now(), notify = false): Statement {
    return events.length === 0 ? write : this.build(write, events, now, notify && this.channel !== undefined);
  }

  /**
   * withEvents' statement; with `claim`, the events are stored leased to `claim.owner` until
   * `claim.leaseUntil` when their instance has no pending event (checked in the same
   * statement), and each inserted row says whether it was (`claimed`).
   */
  private build(
    write: Statement,
    events: readonly DataSyncEvent[],
    now: number,
    notify: boolean,
    claim?: { owner: string; leaseUntil: number },
  ): Statement & { values: unknown[] } {
    const values: unknown[] = [...(write.values ?? [])];
    const first = values.length + 1;
    for (const event of events)
      values.push(event.eventId, event.aggregate, String(event.id), event.version, payloadOf(event));
    values.push(now);
    if (notify) values.push(this.channel);
    if (claim !== undefined) values.push(claim.owner, claim.leaseUntil);
    const text = this.eventsText(write.text, first, events.length, notify, claim !== undefined);
    return preparedStatement(this.pool, text, values) as Statement & { values: unknown[] };
  }

  /** The text of build(), made once per write text and shape. */
  private eventsText(write: string, first: number, count: number, notify: boolean, claim: boolean): string {
    let texts = this.texts.get(write);
    if (texts === undefined) this.texts.set(write, (texts = new Map()));
    const shape = count * 4 + (notify ? 1 : 0) + (claim ? 2 : 0);
    let text = texts.get(shape);
    if (text !== undefined) return text;
    const event = (i: number) => {
      const at = first + i * 5;
      return `$${at}::text, $${at + 1}::text, $${at + 2}::text, $${at + 3}::bigint, $${at + 4}::json`;
    };
    let next = first + count * 5;
    const time = `$${next++}::bigint`;
    const channel = notify ? `$${next++}` : '';
    const t = this.table;
    // Claimed only when the instance has nothing pending: the new events are then its head.
    const free = claim
      ? `, f AS (SELECT NOT EXISTS (SELECT 1 FROM ${t} x WHERE x.aggregate = $${first + 1}::text ` +
        `AND x.aggregate_id = $${first + 2}::text AND x.dead_at IS NULL) AS free)`
      : '';
    const lease = claim
      ? `, CASE WHEN f.free THEN $${next}::text END, CASE WHEN f.free THEN $${next + 1}::bigint END`
      : '';
    const from = claim ? 'FROM w CROSS JOIN f' : 'FROM w';
    // One event (the common case) is a plain SELECT from the write; several come from VALUES
    // in the order the write collected them, which is the order their seq is drawn in.
    const source =
      count === 1
        ? `SELECT ${event(0)}, ${time}, ${time}${lease} ${from}`
        : `SELECT v.event_id, v.aggregate, v.aggregate_id, v.version, v.payload, ${time}, ${time}${lease} ${from} ` +
          `CROSS JOIN (VALUES ${Array.from({ length: count }, (_, i) => `(${i}, ${event(i)})`).join(', ')}) ` +
          'AS v(ord, event_id, aggregate, aggregate_id, version, payload) ORDER BY v.ord';
    text =
      `WITH w AS (${write} RETURNING 1)${free} ` +
      `INSERT INTO ${t} (event_id, aggregate, aggregate_id, version, payload, stored_at, next_attempt_at${claim ? ', owner, lease_until' : ''}) ` +
      source +
      (notify ? ` RETURNING pg_notify(${channel}, '')` : claim ? ' RETURNING owner IS NOT NULL AS claimed' : '');
    texts.set(shape, text);
    return text;
  }

  async claim(request: OutboxClaimRequest): Promise<OutboxClaim[]> {
    const owner = checkOwner(request?.owner);
    const limit = checkPositiveInteger(request.limit, 'limit');
    const leaseMs = checkPositiveInteger(request.leaseMs, 'leaseMs');
    const now = checkTime(request.now, 'now');
    const t = this.table;
    // The head of each instance is locked SKIP LOCKED (another claim holding it skips the
    // instance); a concurrent claim that committed first is seen by the lock's re-check of the
    // head's lease. Every pending row of a locked instance is then leased in the same statement.
    const result = await this.run<Row & { head_seq: string; head_stored_at: string }>(
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

  async ack(owner: string, eventIds: readonly string[]): Promise<number> {
    checkOwner(owner);
    const ids = checkEventIds(eventIds);
    if (ids.length === 0) return 0;
    const result = await this.run(
      `DELETE FROM ${this.table} WHERE event_id = ANY($1::text[]) AND owner = $2 AND dead_at IS NULL`,
      [ids, owner],
      true,
    );
    return result.rowCount ?? 0;
  }

  async fail(owner: string, eventId: string, failure: OutboxFailure): Promise<OutboxFailureOutcome | null> {
    checkOwner(owner);
    checkEventId(eventId);
    const error = checkText(failure?.error, 'failure.error');
    const retryAt = checkTime(failure.retryAt, 'failure.retryAt');
    const maxAttempts = checkPositiveInteger(failure.maxAttempts, 'failure.maxAttempts');
    const now = checkTime(failure.now, 'failure.now');
    const t = this.table;
    const result = await this.run<{ attempts: number; dead_at: string | null; next_attempt_at: string }>(
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

  async renew(owner: string, eventIds: readonly string[], leaseUntil: number): Promise<number> {
    checkOwner(owner);
    const ids = checkEventIds(eventIds);
    checkTime(leaseUntil, 'leaseUntil');
    if (ids.length === 0) return 0;
    // A claim that takes an expired lease over sets its own owner in the same statement: once
    // it committed, this matches nothing; while it runs, the row lock orders the two.
    const result = await this.run(
      `UPDATE ${this.table} SET lease_until = $3 WHERE event_id = ANY($1::text[]) AND owner = $2 AND dead_at IS NULL`,
      [ids, owner, leaseUntil],
      true,
    );
    return result.rowCount ?? 0;
  }

  async release(owner: string, eventIds?: readonly string[]): Promise<number> {
    checkOwner(owner);
    const ids = eventIds === undefined ? null : checkEventIds(eventIds);
    const result = await this.run(
      `UPDATE ${this.table} SET owner = NULL, lease_until = NULL WHERE owner = $1 AND dead_at IS NULL AND ($2::text[] IS NULL OR event_id = ANY($2::text[]))`,
      [owner, ids],
    );
    return result.rowCount ?? 0;
  }

  async status(now: number): Promise<OutboxStatus> {
    checkTime(now, 'now');
    const text = `SELECT count(*) FILTER (WHERE dead_at IS NULL) AS pending, min(stored_at) FILTER (WHERE dead_at IS NULL) AS oldest,
              count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead FROM ${this.table}`;
    type StatusRow = { pending: string; oldest: string | null; dead: string };
    let result: QueryResult<StatusRow>;
    if (this.statusPool === undefined) result = await this.run<StatusRow>(text, []);
    else {
      await this.ensureTable();
      result = await this.statusPool.query<StatusRow>(text);
    }
    const row = result.rows[0];
    return {
      pending: Number(row.pending),
      oldestPendingAgeMs: row.oldest === null ? null : now - Number(row.oldest),
      deadLetters: Number(row.dead),
    };
  }

  async listDeadLetters(query: OutboxDeadLetterQuery = {}): Promise<OutboxRecord[]> {
    const limit = query.limit === undefined ? 100 : checkPositiveInteger(query.limit, 'limit');
    const aggregate = query.aggregate === undefined ? null : checkText(query.aggregate, 'aggregate');
    const after = query.after === undefined ? null : checkEventId(query.after);
    const t = this.table;
    const result = await this.run<Row>(
      `SELECT ${RETURNED('d')} FROM ${t} d WHERE d.dead_at IS NOT NULL AND ($2::text IS NULL OR d.aggregate = $2)
         AND ($3::text IS NULL OR (d.dead_at, d.event_id COLLATE "C") > (SELECT c.dead_at, c.event_id COLLATE "C" FROM ${t} c WHERE c.event_id = $3 AND c.dead_at IS NOT NULL))
       ORDER BY d.dead_at, d.event_id COLLATE "C" LIMIT $1`,
      [limit, aggregate, after],
    );
    return result.rows.map(toRecord);
  }

  async replayDeadLetters(eventIds: readonly string[], now: number): Promise<number> {
    const ids = checkEventIds(eventIds);
    checkTime(now, 'now');
    if (ids.length === 0) return 0;
    const inStatement = this.channel !== undefined && OutboxWakeUp.mustNotifyInStatement(this.pool);
    const result = await this.run(
      `UPDATE ${this.table} SET attempts = 0, next_attempt_at = $2, owner = NULL, lease_until = NULL, dead_at = NULL, last_error = NULL
       WHERE event_id = ANY($1::text[]) AND dead_at IS NOT NULL RETURNING 1${inStatement ? `, pg_notify($3, '')` : ''}`,
      inStatement ? [ids, now, this.channel] : [ids, now],
    );
    const replayed = result.rowCount ?? 0;
    if (replayed > 0 && !inStatement) this.wakeUp.afterWrite();
    return replayed;
  }

  /**
   * `listener` runs after every commit of a write with unclaimed events: in process for this
   * store's own writes (no round trip), and — with a notify channel — on LISTEN, on a
   * connection of its own (from the pool's settings), for every process's. A lost connection is
   * reopened with backoff (from 250 ms, doubling, up to 10 s); meanwhile the relay's polling finds the events.
   */
  async watch(listener: () => void): Promise<() => Promise<void>> {
    const stopLocal = this.wakeUp.watchInProcess(listener);
    if (this.channel === undefined) return async () => stopLocal();
    try {
      const stopListening = await listenOnChannel(this.pool, this.channel, listener);
      return async () => {
        stopLocal();
        await stopListening();
      };
    } catch (error) {
      stopLocal();
      throw error;
    }
  }

  /**
   * One statement of the store's. `prepared` for the short, frequent ones (a lookup by owner and
   * event id): a statement whose best plan depends on its values and on the backlog (a claim, a
   * failure, the operator's) is planned afresh each time, as PostgreSQL may otherwise settle on
   * a generic plan for a prepared one.
   */
  private async run<R extends Record<string, any> = Record<string, unknown>>(
    text: string,
    values: unknown[],
    prepared = false,
  ): Promise<QueryResult<R>> {
    await this.ensureTable();
    // Operator calls inside a use case's transaction join it, like the repository's statements.
    const queryable = queryableFor(this.pool, 'PostgresOutboxStore');
    try {
      const statement = prepared ? preparedStatement(this.pool, text, values) : { text, values };
      return (await queryable.query(statement)) as QueryResult<R>;
    } catch (error) {
      if ((error as { code?: string }).code === '42P01') {
        throw new RepositoryConfigurationError(
          `PostgresOutboxStore: table ${this.table} does not exist. Create it in a migration (collectSchemaStatements() from @ddd-kit/core/postgres gives every table of the app, createTableStatement() this one) or let the store create it at start-up (createTables: true, the default).`,
          { cause: error },
        );
      }
      throw error;
    }
  }
}
