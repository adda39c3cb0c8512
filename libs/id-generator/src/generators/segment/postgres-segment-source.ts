import { companionPool } from '@ddd-kit/core/postgres';
import { IdGeneratorOptionsError } from '../../errors.js';
import { assertPool, idSourceSchema, tableName, type PgPool } from '../../pg/pg.utils.js';
import type { SegmentSource } from './segment-source.js';

export interface PostgresSegmentSourceOptions {
  /** Schema of the table; default none (the connection's search_path). */
  schema?: string;
  /** Prefix of the table name; default `ddd_kit_` (table `ddd_kit_segments`). */
  tablePrefix?: string;
  /** Create the table (IF NOT EXISTS) on first use; default true. */
  createTables?: boolean;
}

/**
 * SegmentId blocks from PostgreSQL: one row per segment name, moved up by one atomic statement
 * (`INSERT … ON CONFLICT (name) DO UPDATE SET max = max + $size RETURNING max`: the row lock
 * makes concurrent reservations queue, each getting its own block). It runs on a connection of
 * the pool's own and commits at once, never inside a transaction the caller has open: a block
 * handed out must stay taken even if that transaction rolls back, or two instances would issue
 * the same numbers. That connection comes from a one-connection pool made from the pool's
 * settings: an ID asked for inside a request's transaction never waits for a connection of the
 * pool that every such request may be holding.
 */
export class PostgresSegmentSource implements SegmentSource {
  readonly table: string;
  private readonly pool: PgPool;
  /** Where blocks are reserved (the pool itself when it is not a pg.Pool). */
  private readonly reservePool: PgPool & { end?(): Promise<void> };
  private readonly statement: string;
  private readonly ensureTable: () => Promise<void>;

  constructor(pool: PgPool, options: PostgresSegmentSourceOptions = {}) {
    this.pool = assertPool(pool, 'PostgresSegmentSource');
    this.reservePool = companionPool(this.pool, { max: 1 });
    this.table = tableName(options.schema, options.tablePrefix ?? 'ddd_kit_', 'segments', 'PostgresSegmentSource');
    const createTables = options.createTables ?? true;
    if (typeof createTables !== 'boolean')
      throw new IdGeneratorOptionsError('PostgresSegmentSource: createTables must be a boolean');
    this.ensureTable = idSourceSchema(this.pool, {
      owner: 'PostgresSegmentSource',
      part: '@ddd-kit/id-generator/segments',
      create: createTables,
      tables: () => [{ name: this.table, columns: ['name', 'max'] }],
      // Numbered by place, forward only: a change appends the next step (docs/postgresql.md, Migrations).
      migrations: () => [{ name: 'create table', statements: this.ddl() }],
    });
    this.statement = `INSERT INTO ${this.table} AS s (name, max) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET max = s.max + EXCLUDED.max RETURNING max`;
  }

  /** The DDL run on first use (for a migration when `createTables: false`). */
  ddl(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS ${this.table} (\n  name text PRIMARY KEY,\n  max bigint NOT NULL CHECK (max >= 0)\n)`,
    ];
  }

  async reserve(key: string, size: number): Promise<number> {
    await this.ensureTable();
    const result = await this.reservePool.query(this.statement, [key, size]);
    return Number(result.rows[0].max);
  }

  /** Ends the reservations' own connection (the pool it was given stays the caller's; idle, it lets the process exit anyway). */
  async close(): Promise<void> {
    if (this.reservePool !== this.pool) await this.reservePool.end?.();
  }
}
