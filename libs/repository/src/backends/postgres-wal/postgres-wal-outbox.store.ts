import { guardPool } from '@ddd-kit/core/postgres';
import type { ClientConfig, Pool } from 'pg';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { RepositoryConfigurationError } from '../../errors.js';
import {
  checkDeadLetterFilter,
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
  OutboxDeadLetterFilter,
  OutboxDeadLetterQuery,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxRecord,
  OutboxSlotStatus,
  OutboxStatus,
  OutboxStore,
} from '../../outbox/outbox.interfaces.js';
import type { OutboxJoinedWrite } from '../postgres/postgres-outbox.join.js';
import {
  filterValues,
  listDeadLetters,
  MATCHES,
  outboxStatus,
  purgeDeadLetters,
} from '../postgres/postgres-outbox.operator.js';
import { eventOf, payloadOf, type Row } from '../postgres/postgres-outbox.rows.js';
import { PostgresOutboxTable } from '../postgres/postgres-outbox.table.js';
import type { PostgresStatement } from '../postgres/postgres-repository.statements.js';
import { WalOutboxBuffer } from './wal-outbox.buffer.js';
import { ensureWalSetup, walSetupStatements } from './wal-outbox.setup.js';
import { WalSlotReader } from './wal-outbox.slot.js';
import { WalEventsStatements } from './wal-outbox.write.js';

export interface PostgresWalOutboxStoreOptions {
  /** The pool of the repositories whose writes emit their events (the slot's database). */
  pool: Pool;
  /** The logical replication slot (default `ddd_kit_outbox`): lowercase letters, digits, `_`. One consumer at a time. */
  slot?: string;
  /** The publication pgoutput is started with (default `ddd_kit_outbox`; created empty: messages need no table). */
  publication?: string;
  /** The prefix of the events' messages (default `ddd_kit_outbox`): stores on one database with slots of their own and one prefix each stay apart. */
  prefix?: string;
  /** The table of dead letters, written only when an event fails for good (default `ddd_kit_outbox_dead`). */
  deadLetterTable?: string;
  /** Create the slot, publication and dead-letter table when missing (default true). */
  createTables?: boolean;
  /** Taking the slot while another process holds it: retried after `initialMs` (default 250), doubling up to `maxMs` (default 5,000). */
  retry?: { initialMs?: number; maxMs?: number };
  /**
   * The most events read and not yet finished (default 10,000): past it the slot is not read
   * until the relays have finished half of them, so a relay behind (a broker down) costs WAL
   * kept on the server, not this process's memory.
   */
  maxBuffered?: number;
  /** The replication connection's settings (default: the pool's). */
  connection?: ClientConfig;
  /** Where `status()` runs its queries when not on `pool` (see PostgresOutboxStoreOptions.statusPool). */
  statusPool?: Pool;
}

/**
 * An outbox without a table on PostgreSQL (opt-in; needs `wal_level = logical`). A
 * PostgresRepository's write emits its events as one transactional logical decoding message in
 * the write's own statement (see WalEventsStatements); the process holding the logical
 * replication slot reads them back in commit order (pgoutput, `messages` on) into a buffer
 * that claim, ack, fail, renew and release work on, with the in-memory store's leases. The
 * slot's position moves only past transactions whose every event was acked or dead-lettered:
 * a crash loses the buffer, and the next holder reads again from there (at least once, in
 * order per instance). One process reads the slot at a time (PostgreSQL refuses a second
 * session); the others claim nothing and retry taking it. Dead letters go to a table, only on
 * the failure path; requeued ones are emitted again, in the transaction that deletes them.
 *
 * The slot is read while the store is started: `start()`, or an OutboxRelay's `watch`.
 */
export class PostgresWalOutboxStore implements OutboxStore {
  readonly pool: Pool;
  readonly slot: string;
  readonly publication: string;
  readonly prefix: string;
  private readonly statusPool: Pool | undefined;
  private readonly create: boolean;
  private readonly deadLetters: PostgresOutboxTable;
  private readonly statements: WalEventsStatements;
  private readonly buffer: WalOutboxBuffer;
  private readonly reader: WalSlotReader;
  private readonly listeners = new Set<() => void>();
  private setup: Promise<void> | undefined;
  /** start() and watch() not yet undone: the slot is read while above 0. */
  private users = 0;

  constructor(options: PostgresWalOutboxStoreOptions) {
    const pool = options?.pool;
    if (pool === undefined || pool === null || typeof pool.query !== 'function' || typeof pool.connect !== 'function')
      throw new RepositoryConfigurationError('PostgresWalOutboxStore: pool must be a pg.Pool');
    this.pool = guardPool(pool);
    this.slot = options.slot ?? 'ddd_kit_outbox';
    if (!/^[a-z0-9_]{1,63}$/.test(this.slot))
      throw new RepositoryConfigurationError(
        `PostgresWalOutboxStore: slot must be 1 to 63 lowercase letters, digits or underscores, got ${JSON.stringify(this.slot)}`,
      );
    this.publication = options.publication ?? 'ddd_kit_outbox';
    walSetupStatements(this); // checks the publication's name
    this.prefix = options.prefix ?? 'ddd_kit_outbox';
    if (typeof this.prefix !== 'string' || this.prefix.length === 0)
      throw new RepositoryConfigurationError('PostgresWalOutboxStore: prefix must be a non-empty string');
    if (options.createTables !== undefined && typeof options.createTables !== 'boolean')
      throw new RepositoryConfigurationError('PostgresWalOutboxStore: createTables must be a boolean');
    this.create = options.createTables ?? true;
    this.statusPool = options.statusPool;
    this.deadLetters = new PostgresOutboxTable(
      this.pool,
      options.deadLetterTable ?? 'ddd_kit_outbox_dead',
      this.create,
    );
    const maxBuffered = options.maxBuffered ?? 10_000;
    if (!(Number.isSafeInteger(maxBuffered) && maxBuffered > 0))
      throw new RepositoryConfigurationError('PostgresWalOutboxStore: maxBuffered must be a positive integer');
    this.statements = new WalEventsStatements(this.pool, this.prefix);
    this.buffer = new WalOutboxBuffer((lsn) => this.reader.confirm(lsn));
    const poolOptions = (pool as unknown as { options?: ClientConfig }).options ?? {};
    this.reader = new WalSlotReader(
      {
        connection: options.connection ?? poolOptions,
        pool: this.pool,
        slot: this.slot,
        publication: this.publication,
        prefix: this.prefix,
        retryInitialMs: options.retry?.initialMs ?? 250,
        retryMaxMs: options.retry?.maxMs ?? 5_000,
        maxBuffered,
      },
      this.buffer,
      () => this.listeners.forEach((listener) => listener()),
    );
  }

  /**
   * Checks `wal_level` (failing with what to set), then creates — or, with `createTables:
   * false`, checks — the publication, the slot and the dead-letter table; a no-op once done.
   * The first write runs it too: the slot must exist before an event is emitted.
   */
  ensureSetup(): Promise<void> {
    this.setup ??= (async () => {
      await ensureWalSetup({ pool: this.pool, slot: this.slot, publication: this.publication, create: this.create });
      await this.deadLetters.ensure();
    })().catch((error: unknown) => {
      this.setup = undefined;
      throw error;
    });
    return this.setup;
  }

  /** The statements creating the publication, the slot and the dead-letter table (for a migration). */
  schemaStatements(): string[] {
    return [...walSetupStatements(this), ...this.deadLetters.statements()];
  }

  /**
   * Starts reading the slot (after ensureSetup): at once when free, else retrying with backoff
   * while another process holds it. Resolves without waiting for the slot (see whenHolding).
   */
  async start(): Promise<void> {
    await this.ensureSetup();
    if (this.users++ === 0) this.reader.start();
  }

  /** Undoes one start(): the last one stops reading and gives the slot up (unfinished events are read again by its next holder). */
  async stop(): Promise<void> {
    if (this.users === 0) return;
    if (--this.users === 0) await this.reader.stop();
  }

  /** True while this process reads the slot. */
  get holdsSlot(): boolean {
    return this.reader.holding;
  }

  /** Resolves once this process reads the slot. */
  whenHolding(): Promise<void> {
    return this.reader.whenHolding();
  }

  /** Resolves once every transaction committed before the call has been read (this process holds the slot). */
  sync(): Promise<void> {
    return this.reader.sync();
  }

  /** Stops, then drops the slot: events not yet confirmed are gone for good. Leaves the publication and the table. */
  async dropSlot(): Promise<void> {
    this.users = 0;
    await this.reader.stop();
    // The server ends the session a moment after the connection: until then the slot is active.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.pool.query(
          'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
          [this.slot],
        );
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== '55006' || attempt >= 500) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    this.setup = undefined;
  }

  // ---------------------------------------------------------------- the repositories' writes

  /** A PostgresRepository's write with its events emitted in the same statement (see WalEventsStatements). */
  async joinWrite(
    pool: Pool,
    repository: string,
    write: PostgresStatement,
    events: readonly DataSyncEvent[],
  ): Promise<OutboxJoinedWrite> {
    if (events.length === 0) return { statement: write, wrote: () => undefined };
    if (pool !== this.pool)
      throw new RepositoryConfigurationError(
        `${repository}: its outbox (PostgresWalOutboxStore) must use the repository's own pool, so that events commit in the same transaction as the row`,
      );
    if (this.setup === undefined) await this.ensureSetup();
    else await this.setup;
    return { statement: this.statements.build(write, events), wrote: () => undefined };
  }

  // ---------------------------------------------------------------- relay side (the buffer)

  async claim(request: OutboxClaimRequest): Promise<OutboxClaim[]> {
    const owner = checkOwner(request?.owner);
    const limit = checkPositiveInteger(request.limit, 'limit');
    const leaseMs = checkPositiveInteger(request.leaseMs, 'leaseMs');
    const now = checkTime(request.now, 'now');
    return this.buffer.claim(owner, limit, leaseMs, now);
  }

  async ack(owner: string, eventIds: readonly string[]): Promise<number> {
    checkOwner(owner);
    return this.buffer.ack(owner, checkEventIds(eventIds));
  }

  async fail(owner: string, eventId: string, failure: OutboxFailure): Promise<OutboxFailureOutcome | null> {
    checkOwner(owner);
    checkEventId(eventId);
    checkText(failure?.error, 'failure.error');
    checkTime(failure.retryAt, 'failure.retryAt');
    checkPositiveInteger(failure.maxAttempts, 'failure.maxAttempts');
    checkTime(failure.now, 'failure.now');
    const outcome = this.buffer.failure(owner, eventId, failure);
    if (outcome === null) return null;
    // Its dead letter is stored before the event leaves the buffer (and the slot moves past it).
    if (outcome.dead !== null) await this.bury(outcome.dead);
    return this.buffer.fail(owner, eventId, failure);
  }

  async renew(owner: string, eventIds: readonly string[], leaseUntil: number): Promise<number> {
    checkOwner(owner);
    const ids = checkEventIds(eventIds);
    checkTime(leaseUntil, 'leaseUntil');
    return this.buffer.renew(owner, ids, leaseUntil);
  }

  async release(owner: string, eventIds?: readonly string[]): Promise<number> {
    checkOwner(owner);
    return this.buffer.release(owner, eventIds === undefined ? undefined : checkEventIds(eventIds));
  }

  /**
   * Pending events (read by this process, when it holds the slot), dead letters, and the slot:
   * the WAL it keeps from being recycled (`pg_current_wal_lsn() - restart_lsn`) and how far its
   * confirmed position is behind (`pg_current_wal_lsn() - confirmed_flush_lsn`).
   */
  async status(now: number): Promise<OutboxStatus> {
    checkTime(now, 'now');
    const dead = await outboxStatus(this.deadLetters, this.statusPool, now);
    const { rows } = await (this.statusPool ?? this.pool).query<{ active: boolean; retained: string; lag: string }>(
      `SELECT active, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint AS retained,
              pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint AS lag
         FROM pg_replication_slots WHERE slot_name = $1`,
      [this.slot],
    );
    const slot: OutboxSlotStatus = {
      slot: this.slot,
      held: this.reader.holding,
      active: rows[0]?.active ?? false,
      retainedWalBytes: rows[0] === undefined ? null : Number(rows[0].retained),
      lagBytes: rows[0] === undefined ? null : Number(rows[0].lag),
    };
    return {
      ...this.buffer.pending(now),
      deadLetters: dead.deadLetters,
      oldestDeadLetterAgeMs: dead.oldestDeadLetterAgeMs,
      slots: [slot],
    };
  }

  // ---------------------------------------------------------------- operator side (the dead-letter table)

  listDeadLetters(query: OutboxDeadLetterQuery = {}): Promise<OutboxRecord[]> {
    return listDeadLetters(this.deadLetters, query);
  }

  /**
   * Deletes the matching dead letters and emits each again (due at `now`, attempts 0) in the
   * same transaction: pending again once read from the slot — at once in this process when it
   * holds the slot (this waits for it).
   */
  async requeueDeadLetters(filter: OutboxDeadLetterFilter, now: number): Promise<number> {
    const checked = checkDeadLetterFilter(filter);
    checkTime(now, 'now');
    if (checked.eventIds?.length === 0) return 0;
    await this.deadLetters.ensure();
    const client = await this.pool.connect();
    let count: number;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<Row>(
        `DELETE FROM ${this.deadLetters.name} d WHERE ${MATCHES('d', 1)}
         RETURNING d.event_id, d.aggregate, d.aggregate_id, d.version, d.payload, d.stored_at, d.dead_at`,
        filterValues(checked),
      );
      rows.sort((a, b) => Number(a.dead_at) - Number(b.dead_at) || (a.event_id < b.event_id ? -1 : 1));
      const messages = rows.map((row) => JSON.stringify({ s: Number(row.stored_at), n: now, e: [eventOf(row)] }));
      if (messages.length > 0)
        await client.query(
          'SELECT pg_logical_emit_message(true, $1::text, m) FROM unnest($2::text[]) WITH ORDINALITY AS u(m, i) ORDER BY i',
          [this.prefix, messages],
        );
      await client.query('COMMIT');
      count = rows.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    if (count > 0 && this.reader.holding) await this.reader.sync();
    return count;
  }

  purgeDeadLetters(filter: OutboxDeadLetterFilter): Promise<number> {
    return purgeDeadLetters(this.deadLetters, filter);
  }

  replayDeadLetters(eventIds: readonly string[], now: number): Promise<number> {
    return this.requeueDeadLetters({ eventIds }, now);
  }

  /**
   * Reads the slot while watched (an OutboxRelay watches from its start to its stop); `listener`
   * runs after each transaction with events is read. Unwatching waits (up to `drainMs`) for the
   * deliveries under way to finish first — a relay unwatches before its last handlers end — so
   * that their acks move the slot, rather than their events being read again by the next holder.
   */
  async watch(listener: () => void, drainMs = 10_000): Promise<() => Promise<void>> {
    await this.start();
    this.listeners.add(listener);
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      this.listeners.delete(listener);
      const until = Date.now() + drainMs;
      while (this.users === 1 && this.buffer.claimed && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 10));
      await this.stop();
    };
  }

  private async bury(record: OutboxRecord): Promise<void> {
    await this.deadLetters.query(
      `INSERT INTO ${this.deadLetters.name} (event_id, aggregate, aggregate_id, version, payload, stored_at, attempts, next_attempt_at, last_error, dead_at)
       VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8, $9, $10)`,
      [
        record.eventId,
        record.aggregate,
        String(record.aggregateId),
        record.version,
        payloadOf(record.event),
        record.storedAt,
        record.attempts,
        record.nextAttemptAt,
        record.lastError,
        record.deadAt,
      ],
    );
  }
}
