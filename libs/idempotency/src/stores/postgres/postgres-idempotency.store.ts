import { createHash, randomUUID } from 'node:crypto';
import {
  guardPool,
  activeTransactionFor,
  bareTableName,
  outsideTransaction,
  PgSchema,
  qualifiedName,
  queryableFor,
  preparedStatement,
  runTransaction,
  type PgPool,
  type PgQueryConfig,
  type PgQueryable,
} from '@ddd-kit/core/postgres';
import { IdempotencyArgumentError, IdempotencyConflictError, IdempotencyInProgressError } from '../../errors.js';
import type { IdempotencyOutcome, IdempotencyRequest, IdempotencyStore } from '../../idempotency.interfaces.js';
import {
  assertDuration,
  checkRequest,
  decodeResult,
  DEFAULT_LEASE_MS,
  DEFAULT_TTL_MS,
  encodeResult,
} from '../../idempotency.validation.js';
import { fingerprintDigest } from '../../leased-run.js';
import type { PostgresIdempotencyStoreOptions } from './postgres-idempotency.interfaces.js';
import { COLUMNS, ddl, statements, type IdempotencyStatements } from './postgres-idempotency.sql.js';

const OWNER = 'PostgresIdempotencyStore';

/** A record as stored. */
interface StoredRow {
  fingerprint: string;
  token: string;
  state: string;
  result: string | null;
}

/** What the claim answers: locked, taken, else the row its snapshot saw (all null when none) and whether it is live. */
interface Claim extends StoredRow {
  locked: boolean;
  taken: boolean;
  live: boolean | null;
}
const SWEEP_BATCH = 1_000;

/**
 * Idempotency records on PostgreSQL (node-postgres), in the transaction of the effect: inside
 * an ambient transaction on this pool (`@Transactional()` with @ddd-kit/transactional-adapter-pg,
 * `runInTransaction`) the record joins it, so it commits or rolls back with what the work did;
 * with none, the store runs the work inside a transaction of its own (record, work, completion).
 * "Done" and "recorded" cannot come apart.
 *
 * A run holds its key with a transaction-level advisory lock it does not wait for: a concurrent
 * repeat (another transaction) answers IdempotencyInProgressError at once instead of blocking on
 * the row, and sees the result once the first transaction committed. A crash rolls back record
 * and effect together: the key is simply free again.
 *
 * A run with a fresh key costs two statements in the transaction, each prepared once per
 * connection: the claim (lock, insert, or the row found instead) and the completion.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  /** The quoted, schema-qualified table. */
  readonly table: string;
  private readonly sql: IdempotencyStatements;
  private readonly schema: PgSchema;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly sweepIntervalMs: number;
  private readonly foreignTransaction: 'refuse' | 'autocommit';
  private readonly transaction?: <R>(fn: () => Promise<R>) => Promise<R>;
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly pool: PgPool,
    options: PostgresIdempotencyStoreOptions = {},
  ) {
    if (typeof (pool as Partial<PgPool> | undefined)?.connect !== 'function')
      throw new IdempotencyArgumentError(`${OWNER}: pass a node-postgres Pool, e.g. new Pool({ connectionString })`);
    guardPool(pool);
    const {
      schema,
      table = 'ddd_kit_idempotency',
      createTables = true,
      ttlMs = DEFAULT_TTL_MS,
      leaseMs = DEFAULT_LEASE_MS,
      sweepIntervalMs = 60_000,
      foreignTransaction = 'refuse',
      transaction,
    } = options ?? {};
    assertDuration(ttlMs, `${OWNER}: ttlMs`);
    assertDuration(leaseMs, `${OWNER}: leaseMs`);
    if (!(Number.isSafeInteger(sweepIntervalMs) && sweepIntervalMs >= 0))
      throw new IdempotencyArgumentError(`${OWNER}: sweepIntervalMs must be a non-negative integer`);
    if (typeof createTables !== 'boolean')
      throw new IdempotencyArgumentError(`${OWNER}: createTables must be a boolean`);
    if (foreignTransaction !== 'refuse' && foreignTransaction !== 'autocommit')
      throw new IdempotencyArgumentError(`${OWNER}: foreignTransaction must be 'refuse' or 'autocommit'`);
    if (transaction !== undefined && typeof transaction !== 'function')
      throw new IdempotencyArgumentError(
        `${OWNER}: transaction must be a function running its argument in a transaction`,
      );
    this.table = qualifiedName(schema, table, OWNER, (m) => new IdempotencyArgumentError(m));
    const index = `"${bareTableName(this.table).slice(0, 50)}_expires_at"`;
    this.sql = statements(this.table);
    this.schema = new PgSchema(pool, {
      owner: OWNER,
      create: createTables,
      part: '@ddd-kit/idempotency',
      tables: () => [{ name: this.table, columns: COLUMNS }],
      // Numbered by place, forward only: a change appends the next step (docs/postgresql.md, Migrations).
      migrations: () => [{ name: 'create table', statements: ddl(this.table, index) }],
    });
    this.ttlMs = ttlMs;
    this.leaseMs = leaseMs;
    this.sweepIntervalMs = sweepIntervalMs;
    this.foreignTransaction = foreignTransaction;
    this.transaction = transaction;
  }

  /** Every statement creating what this store needs, in order (for a migration). */
  schemaStatements(): string[] {
    return this.schema.statements();
  }

  /**
   * Creates the table (or, with `createTables: false`, checks it) now, on a connection of its
   * own and never inside a use case's transaction. IdempotencyModule calls it at start-up; a
   * store built by hand does it on first use.
   */
  async ensureSchema(): Promise<void> {
    await this.schema.ensure();
    this.startSweeping();
  }

  async run<R>(request: IdempotencyRequest, work: () => Promise<R>): Promise<IdempotencyOutcome<R>> {
    const { ttlMs } = checkRequest(request, work, this.ttlMs);
    if (!this.schema.ready) await this.ensureSchema();
    const own = activeTransactionFor(this.pool);
    if (own !== undefined) return this.runOn(own.client, request, work, ttlMs);
    // Refuses (unless told to autocommit) a run inside another pool's transaction.
    queryableFor(this.pool, OWNER, { foreignTransaction: this.foreignTransaction });
    if (this.transaction !== undefined) {
      return this.transaction(() => {
        const opened = activeTransactionFor(this.pool);
        if (opened === undefined)
          throw new IdempotencyArgumentError(
            `${OWNER}: the transaction option ran its function outside any transaction on this store's pool`,
          );
        return this.runOn(opened.client, request, work, ttlMs);
      });
    }
    return runTransaction(this.pool, undefined, (context) => this.runOn(context.guarded, request, work, ttlMs), {
      local: true,
    });
  }

  /** Deletes rows past their retention; resolves the number deleted. */
  async sweep(): Promise<number> {
    await this.schema.ensure();
    let deleted = 0;
    for (;;) {
      // Outside any ambient transaction: housekeeping never joins a use case.
      const { rowCount } = await outsideTransaction(() => this.pool.query(this.sql.sweep, [SWEEP_BATCH]));
      deleted += rowCount ?? 0;
      if ((rowCount ?? 0) < SWEEP_BATCH) return deleted;
    }
  }

  /** Stops the periodic sweep (the pool stays open: it is the caller's). */
  async close(): Promise<void> {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private async runOn<R>(
    client: PgQueryable,
    request: IdempotencyRequest,
    work: () => Promise<R>,
    ttlMs: number,
  ): Promise<IdempotencyOutcome<R>> {
    const key = createHash('sha256').update(request.key).digest('base64url');
    const fingerprint = fingerprintDigest(request.fingerprint);
    const token = randomUUID();
    const { rows: claimed } = await client.query(
      this.statement(this.sql.claim, [key, fingerprint, token, this.leaseMs, `${this.table}\n${key}`]),
    );
    const claim = claimed[0] as Claim;
    if (!claim.locked) throw new IdempotencyInProgressError();
    if (!claim.taken) {
      // The row as the claim's snapshot saw it, when still live; else as it is now.
      const row =
        claim.live === true
          ? claim
          : ((await client.query(this.statement(this.sql.read, [key]))).rows[0] as StoredRow | undefined);
      // No row: the sweep took an expired one meanwhile; the caller retries like any in-progress answer.
      if (row === undefined) throw new IdempotencyInProgressError();
      // This run's own row: its claim reached the server twice (a resent statement), the first took it.
      const own = row.token === token && row.state === 'p';
      if (!own) {
        if (row.fingerprint !== fingerprint) throw new IdempotencyConflictError();
        // An in-progress row committed by a run whose outcome is unknown: its lease decides.
        if (row.state !== 'd') throw new IdempotencyInProgressError();
        return { result: decodeResult<R>(row.result ?? '{}'), replayed: true };
      }
    }
    let result: R;
    try {
      result = await work();
    } catch (error) {
      // Usually the transaction rolls back anyway; this keeps nothing when its owner commits
      // regardless. A transaction the work broke refuses the statement: nothing to undo then.
      await client.query(this.statement(this.sql.release, [key, token])).catch(() => undefined);
      throw error;
    }
    await client.query(this.statement(this.sql.complete, [key, token, encodeResult(result), ttlMs]));
    return { result, replayed: false };
  }

  /** A statement of this store, named (prepared once per connection) unless the pool says otherwise. */
  private statement(text: string, values: unknown[]): PgQueryConfig {
    return preparedStatement(this.pool, text, values);
  }

  private startSweeping(): void {
    if (this.sweepIntervalMs === 0 || this.sweeper !== undefined) return;
    // Started outside the caller's context: the timer must not carry a use case's transaction along.
    this.sweeper = outsideTransaction(() =>
      setInterval(() => void this.sweep().catch(() => undefined), this.sweepIntervalMs),
    );
    this.sweeper.unref();
  }
}
