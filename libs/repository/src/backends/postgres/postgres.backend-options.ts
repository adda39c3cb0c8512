import type { Pool, PoolConfig } from 'pg';
import type { RepositoryOutboxOptions } from '../../outbox/outbox.options.js';
import { quoteIdentifier, quoteTableName } from './postgres-sql.utils.js';

/** The PostgreSQL part of RepositoryModule's options (the backend of PostgresRepository). */
export interface PostgresBackendOptions {
  /** PostgreSQL for PostgresRepository subclasses: a URL (the module's own pool) or your pool. */
  postgres?: RepositoryPostgresOptions;
}

export interface RepositoryPostgresOptions {
  /**
   * A `postgres://` URL: the module opens a pg.Pool, checks that it connects at bootstrap and
   * ends it on shutdown.
   */
  url?: string;
  /** Options for the pool opened from `url` (`max`, `idleTimeoutMillis`, `ssl`, …). */
  poolOptions?: Omit<PoolConfig, 'connectionString'>;
  /**
   * Or your pg.Pool: the module uses it and leaves ending it to you. Use the same pool for
   * `TransactionalAdapterPg`: repositories join transactions started from their own pool.
   */
  pool?: Pool;
  /** Whether repositories (and the outbox) create (or check) their table at start-up when it is missing (default true). */
  createTables?: boolean;
  /**
   * Whether ddd-kit's statements on this pool are prepared: parsed and planned once per
   * connection (default true). False behind a pooler that does not keep prepared statements
   * (PgBouncer in transaction mode before 1.21, or without `max_prepared_statements`).
   */
  preparedStatements?: boolean;
}

/** Throws (through `fail`) for PostgreSQL options that cannot work, the outbox's table and channel included. */
export function validatePostgresBackendOptions(
  options: PostgresBackendOptions & { outbox?: boolean | RepositoryOutboxOptions },
  fail: (what: string) => never,
): void {
  const outbox = options.outbox;
  if (outbox !== null && typeof outbox === 'object') {
    try {
      if (outbox.table !== undefined) quoteTableName(outbox.table, 'outbox.table');
      if (outbox.notifyChannel !== undefined && outbox.notifyChannel !== false)
        quoteIdentifier(outbox.notifyChannel, 'outbox.notifyChannel');
      if (outbox.postgresStore !== undefined && typeof outbox.postgresStore !== 'function')
        fail('outbox.postgresStore must be a function (pool) => OutboxStore');
    } catch (error) {
      fail((error as Error).message);
    }
  }
  const postgres = options.postgres;
  if (postgres === undefined) return;
  if (postgres === null || typeof postgres !== 'object')
    fail('postgres must be an object: { url } (the module opens a pool) or { pool } (yours)');
  const { url, pool, poolOptions, createTables, preparedStatements } = postgres;
  if (url === undefined && pool === undefined)
    fail('postgres needs url (the module opens and ends a pool) or pool (yours)');
  if (url !== undefined && pool !== undefined)
    fail('postgres: pass either url (the module opens and ends a pool) or pool (yours), not both');
  if (url !== undefined && (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url)))
    fail('postgres.url must be a postgres:// or postgresql:// URL');
  if (
    pool !== undefined &&
    (pool === null || typeof (pool as Pool).query !== 'function' || typeof (pool as Pool).connect !== 'function')
  ) {
    fail('postgres.pool must be a pg.Pool (new Pool({ connectionString }))');
  }
  if (poolOptions !== undefined && (poolOptions === null || typeof poolOptions !== 'object'))
    fail('postgres.poolOptions must be an object');
  if (url === undefined && poolOptions !== undefined) fail('postgres.poolOptions needs postgres.url');
  if (createTables !== undefined && typeof createTables !== 'boolean') fail('postgres.createTables must be a boolean');
  if (preparedStatements !== undefined && typeof preparedStatements !== 'boolean')
    fail('postgres.preparedStatements must be a boolean');
}
