import type { Pool } from 'pg';
import { guardPool } from '@ddd-kit/core/postgres';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { RepositoryConfigurationError } from '../../errors.js';
import type {
  OutboxClaim,
  OutboxClaimRequest,
  OutboxDeadLetterFilter,
  OutboxDeadLetterQuery,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxLocalRelay,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from '../../outbox/outbox.interfaces.js';
import { OutboxWriteJoin, type OutboxJoinedWrite } from './postgres-outbox.join.js';
import { listenOnChannel } from './postgres-outbox.listener.js';
import { listDeadLetters, outboxStatus, purgeDeadLetters, requeueDeadLetters } from './postgres-outbox.operator.js';
import { ackEvents, claimEvents, failEvent, releaseLeases, renewLeases } from './postgres-outbox.relay-side.js';
import { OutboxEventsStatements } from './postgres-outbox.statement.js';
import { PostgresOutboxTable } from './postgres-outbox.table.js';
import { OutboxWakeUp } from './postgres-outbox.wake.js';
import type { PostgresStatement } from './postgres-repository.statements.js';
import { quoteIdentifier } from './postgres-sql.utils.js';

export type { OutboxJoinedWrite } from './postgres-outbox.join.js';

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
 * Delivered rows are deleted; dead letters stay until requeued or purged.
 *
 * The parts, a file each: the table and its one way to run a statement (postgres-outbox.table.ts),
 * the statement that joins a write with its events (postgres-outbox.statement.ts) and the hand-off
 * to relays of this process (postgres-outbox.join.ts), the relay's calls (postgres-outbox.relay-side.ts)
 * and the operator's (postgres-outbox.operator.ts).
 */
export class PostgresOutboxStore implements OutboxStore {
  readonly pool: Pool;
  private readonly statusPool: Pool | undefined;
  private readonly table: PostgresOutboxTable;
  private readonly channel: string | undefined;
  private readonly wakeUp: OutboxWakeUp;
  /** Writes joined with their events, and the relays of this process they are handed to. */
  private readonly joins: OutboxWriteJoin;

  constructor(options: PostgresOutboxStoreOptions) {
    const pool = options?.pool;
    if (pool === undefined || pool === null || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
      throw new RepositoryConfigurationError('PostgresOutboxStore: pool must be a pg.Pool');
    }
    this.pool = guardPool(pool);
    this.statusPool = options.statusPool;
    this.table = new PostgresOutboxTable(this.pool, options.table ?? 'ddd_kit_outbox', options.createTables);
    const channel = options.notifyChannel ?? 'ddd_kit_outbox';
    if (channel !== false) quoteIdentifier(channel, 'PostgresOutboxStore: notifyChannel');
    this.channel = channel === false ? undefined : channel;
    this.wakeUp = new OutboxWakeUp(pool, this.channel);
    this.joins = new OutboxWriteJoin({
      pool: this.pool,
      channel: this.channel,
      statements: new OutboxEventsStatements(this.pool, this.table.name),
      wakeUp: this.wakeUp,
      ensureTable: () => this.ensureTable(),
    });
  }

  /** The DDL of the table and its indexes, for teams that migrate by hand. */
  createTableStatement(): string {
    return this.table.createTableStatement();
  }

  /** Creates the table (or, with `createTables: false`, checks it exists) before the first statement; a no-op once done. */
  async ensureTable(): Promise<void> {
    await this.table.ensure();
  }

  /** Every statement creating the table and its indexes, in order (for a migration). */
  schemaStatements(): string[] {
    return this.table.statements();
  }

  // ---------------------------------------------------------------- the repositories' writes

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
  joinWrite(
    pool: Pool,
    repository: string,
    write: PostgresStatement,
    events: readonly DataSyncEvent[],
  ): Promise<OutboxJoinedWrite> {
    return this.joins.join(pool, repository, write, events);
  }

  /** Hands this store's claims to `relay` from now on (see OutboxStore.attachRelay). */
  attachRelay(relay: OutboxLocalRelay): () => void {
    return this.joins.attach(relay);
  }

  /**
   * The repository's conditional write extended to insert `events` in the same statement when
   * (and only when) it matched a row; its row count is then the number of events inserted.
   * Every value is a parameter; the write's own `$n` stay as they are. With `notify` (a
   * transaction whose commit cannot be observed) the statement also calls `pg_notify`, which
   * then holds PostgreSQL's notify lock through the writer's commit; otherwise the relays are
   * woken after the commit (see joinWrite). The text depends only on the write's and the number
   * of events, so it is a prepared statement (see postgres-outbox.statement.ts).
   */
  withEvents(
    write: PostgresStatement,
    events: readonly DataSyncEvent[],
    now: number = Date.now(),
    notify = false,
  ): PostgresStatement {
    return this.joins.unclaimed(write, events, now, notify);
  }

  // ---------------------------------------------------------------- relay side (postgres-outbox.relay-side.ts)

  claim(request: OutboxClaimRequest): Promise<OutboxClaim[]> {
    return claimEvents(this.table, request);
  }

  ack(owner: string, eventIds: readonly string[]): Promise<number> {
    return ackEvents(this.table, owner, eventIds);
  }

  fail(owner: string, eventId: string, failure: OutboxFailure): Promise<OutboxFailureOutcome | null> {
    return failEvent(this.table, owner, eventId, failure);
  }

  renew(owner: string, eventIds: readonly string[], leaseUntil: number): Promise<number> {
    return renewLeases(this.table, owner, eventIds, leaseUntil);
  }

  release(owner: string, eventIds?: readonly string[]): Promise<number> {
    return releaseLeases(this.table, owner, eventIds);
  }

  // ---------------------------------------------------------------- operator side (postgres-outbox.operator.ts)

  status(now: number): Promise<OutboxStatus> {
    return outboxStatus(this.table, this.statusPool, now);
  }

  listDeadLetters(query: OutboxDeadLetterQuery = {}): Promise<OutboxRecord[]> {
    return listDeadLetters(this.table, query);
  }

  requeueDeadLetters(filter: OutboxDeadLetterFilter, now: number): Promise<number> {
    return requeueDeadLetters(this.table, { pool: this.pool, channel: this.channel, wakeUp: this.wakeUp }, filter, now);
  }

  purgeDeadLetters(filter: OutboxDeadLetterFilter): Promise<number> {
    return purgeDeadLetters(this.table, filter);
  }

  replayDeadLetters(eventIds: readonly string[], now: number): Promise<number> {
    return this.requeueDeadLetters({ eventIds }, now);
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
}
