import { PrepareKeyArgumentError } from '../../errors/prepare-key-argument.error.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PrepareKeyFactory } from '../../prepare-key.factory.js';
import { assertName } from '../../prepare-key.validation.js';
import { TTL_FOREVER } from '../../prepared-value.js';
import { ServerClock } from '../../server-clock.js';
import type { PgQueryable } from './pg-ambient-transaction.js';
import type { PostgresPrepareKeyFactoryOptions } from './postgres-prepare-key.interfaces.js';
import { PostgresPrepareKey, type PostgresPrepareKeyContext } from './postgres-prepare-key.js';
import { ddl, statements } from './postgres-prepare-key.sql.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const DEFAULT_TABLE = 'ddd_kit_prepare_keys';
const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 1_000;
/** Duplicate table/type/index: another instance created it at the same moment. */
const CREATED_CONCURRENTLY = new Set(['42P07', '23505', '42710']);

/**
 * PrepareKeys on PostgreSQL through a node-postgres `Pool`, shared by every instance of an
 * application: one table for every name, one atomic statement per operation, expiry decided by
 * the database server's clock. Inside an ambient transaction (`@Transactional()` with
 * `@ddd-kit/transactional-adapter-pg`, or its `runInTransaction`) a reservation commits or rolls
 * back with the use case: a crash between reserving and writing leaves nothing to reconcile.
 *
 * The pool stays the caller's: the factory neither opens nor ends it. Expired rows are deleted
 * a retention period after their ttlAt by `sweep()`, which the factory runs every
 * `sweepIntervalMs` while it is in use (its timer never keeps a process alive; `close()` stops it).
 */
export class PostgresPrepareKeyFactory extends PrepareKeyFactory {
  /** The quoted, schema-qualified table. */
  readonly table: string;
  private readonly context: PostgresPrepareKeyContext;
  private readonly createTable: boolean;
  private readonly indexName: string;
  private readonly sweepIntervalMs: number;
  private creation: Promise<void> | undefined;
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly pool: PgQueryable,
    options: PostgresPrepareKeyFactoryOptions = {},
  ) {
    super();
    if (typeof (pool as Partial<PgQueryable> | undefined)?.query !== 'function') {
      throw new PrepareKeyArgumentError(
        'PostgresPrepareKeyFactory: pass a node-postgres Pool, e.g. `new Pool({ connectionString })`',
      );
    }
    const {
      schema,
      table = DEFAULT_TABLE,
      createTable = true,
      retentionMs = DEFAULT_RETENTION_MS,
      sweepIntervalMs = DEFAULT_SWEEP_INTERVAL_MS,
    } = options;
    for (const [what, identifier] of [
      ['schema', schema],
      ['table', table],
    ] as const) {
      if (identifier !== undefined && (typeof identifier !== 'string' || !IDENTIFIER.test(identifier))) {
        throw new PrepareKeyArgumentError(
          `PostgresPrepareKeyFactory: ${what} must be an identifier of letters, digits and '_' (at most 63, not starting with a digit), got ${JSON.stringify(identifier)}`,
        );
      }
    }
    if (retentionMs !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(retentionMs) && retentionMs >= 0)) {
      throw new PrepareKeyArgumentError(
        `PostgresPrepareKeyFactory: retentionMs must be a non-negative integer number of milliseconds (or Infinity), got ${String(retentionMs)}`,
      );
    }
    if (!(Number.isSafeInteger(sweepIntervalMs) && sweepIntervalMs >= 0)) {
      throw new PrepareKeyArgumentError(
        `PostgresPrepareKeyFactory: sweepIntervalMs must be a non-negative integer, got ${String(sweepIntervalMs)}`,
      );
    }
    this.table = schema === undefined ? `"${table}"` : `"${schema}"."${table}"`;
    this.indexName = `"${table.slice(0, 55)}_drop_at"`;
    this.createTable = createTable;
    this.sweepIntervalMs = sweepIntervalMs;
    this.context = {
      pool,
      statements: statements(this.table),
      ready: () => this.ready(),
      dropAt: (ttlAt) => {
        const dropAt = ttlAt + retentionMs;
        return ttlAt >= TTL_FOREVER || !Number.isSafeInteger(dropAt) ? null : dropAt;
      },
      clock: new ServerClock(),
    };
  }

  /** The statements that create the table and its index, for teams that migrate by hand. */
  get ddl(): string[] {
    return ddl(this.table, this.indexName);
  }

  create<V = unknown>(name: string): PrepareKey<V> {
    assertName(name);
    return new PostgresPrepareKey<V>(name, this.context);
  }

  /** `SELECT 1` on the pool, outside any ambient transaction (a health check must not join a use case). */
  override async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Deletes rows past their retention (and old tombstones); resolves the number deleted. */
  async sweep(): Promise<number> {
    await this.ready();
    let deleted = 0;
    for (;;) {
      // Outside any ambient transaction: housekeeping must not join (or wait for) a use case.
      const { rowCount } = await this.pool.query(this.context.statements.sweep, [SWEEP_BATCH]);
      deleted += rowCount ?? 0;
      if ((rowCount ?? 0) < SWEEP_BATCH) return deleted;
    }
  }

  /** Stops the periodic sweep (the pool is left open: it is the caller's). */
  async close(): Promise<void> {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Creates the table once (unless told not to) and starts the sweep; a failed attempt is retried by the next call. */
  private ready(): Promise<void> {
    this.creation ??= this.prepareTable().then(
      () => this.startSweeping(),
      (error: unknown) => {
        this.creation = undefined;
        throw error;
      },
    );
    return this.creation;
  }

  private async prepareTable(): Promise<void> {
    if (!this.createTable) return;
    for (const statement of this.ddl) {
      try {
        // On the pool, not in an ambient transaction: the table must outlive a rollback.
        await this.pool.query(statement);
      } catch (error) {
        if (!CREATED_CONCURRENTLY.has((error as { code?: string }).code ?? '')) throw error;
      }
    }
  }

  private startSweeping(): void {
    if (this.sweepIntervalMs === 0 || this.sweeper !== undefined) return;
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), this.sweepIntervalMs);
    this.sweeper.unref();
  }
}
