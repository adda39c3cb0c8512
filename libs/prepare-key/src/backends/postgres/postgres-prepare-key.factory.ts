import {
  guardPool,
  outsideTransaction,
  PgSchema,
  qualifiedName,
  type PgPool,
  type PgQueryable,
} from '@ddd-kit/core/postgres';
import { PrepareKeyArgumentError } from '../../errors.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PrepareKeyFactory } from '../../prepare-key.factory.js';
import { assertName } from '../../prepare-key.validation.js';
import { TTL_FOREVER } from '../../prepared-value.js';
import { ServerClock } from '../../server-clock.js';
import type { PostgresPrepareKeyFactoryOptions } from './postgres-prepare-key.interfaces.js';
import { PostgresPrepareKey, type PostgresPrepareKeyContext } from './postgres-prepare-key.js';
import { ddl, statements } from './postgres-prepare-key.sql.js';

const DEFAULT_TABLE = 'ddd_kit_prepare_keys';
const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 1_000;
const COLUMNS = ['name', 'key', 'value', 'ttl_at', 'op', 'drop_at'];

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
  private readonly schema: PgSchema;
  private readonly indexName: string;
  private readonly sweepIntervalMs: number;
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
    guardPool(pool);
    const {
      schema,
      table = DEFAULT_TABLE,
      createTables = true,
      retentionMs = DEFAULT_RETENTION_MS,
      sweepIntervalMs = DEFAULT_SWEEP_INTERVAL_MS,
    } = options;
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
    if (typeof createTables !== 'boolean') {
      throw new PrepareKeyArgumentError('PostgresPrepareKeyFactory: createTables must be a boolean');
    }
    this.table = qualifiedName(schema, table, 'PostgresPrepareKeyFactory', (m) => new PrepareKeyArgumentError(m));
    this.indexName = `"${table.slice(0, 55)}_drop_at"`;
    this.sweepIntervalMs = sweepIntervalMs;
    this.schema = new PgSchema(pool as PgPool, {
      owner: 'PostgresPrepareKeyFactory',
      create: createTables,
      part: '@ddd-kit/prepare-key',
      tables: () => [{ name: this.table, columns: COLUMNS }],
      // Numbered by place, forward only: a change appends the next step (docs/postgresql.md, Migrations).
      migrations: () => [{ name: 'create table', statements: this.ddl }],
    });
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

  /** Every statement creating what this factory needs, in order (for a migration). */
  schemaStatements(): string[] {
    return this.schema.statements();
  }

  /**
   * Creates the table (or, with `createTables: false`, checks it exists) now, on a connection of
   * its own; PrepareKeyModule calls it at bootstrap. Keys of a factory built by hand do it on first use.
   */
  override async ensureSchema(): Promise<void> {
    await this.ready();
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

  /** Resolves once the table exists; starts the sweep then. */
  private async ready(): Promise<void> {
    if (this.schema.ready) return;
    await this.schema.ensure();
    this.startSweeping();
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
