import type { Pool } from 'pg';
import type { AggregateRoot } from '../../aggregate/aggregate-root.js';
import { RepositoryConfigurationError } from '../../errors.js';
import type { RepositoryOptions } from '../../repository/repository.interfaces.js';
import { quoteTableName } from './postgres-sql.utils.js';

export interface PostgresRepositoryOptions<T extends AggregateRoot<any, any>> extends RepositoryOptions<T> {
  /** The pool whose database holds the table. RepositoryModule passes its own. */
  pool?: Pool;
  /** The table (`name` or `schema.name`), instead of the subclass's `table`. */
  table?: string;
  /**
   * Inside a transaction started from another pool (and none from this one): `'refuse'`
   * (default) fails with an error naming both pools, since the statements would commit on their
   * own; `'autocommit'` runs them on this pool anyway (a read-side repository on a second pool).
   */
  foreignTransaction?: 'refuse' | 'autocommit';
  /**
   * Create the table on first use when it is missing (`CREATE TABLE IF NOT EXISTS`, on a
   * connection of its own, outside any transaction). Default true; false for teams that
   * migrate by hand (`createTableStatement()` prints the DDL).
   */
  createTables?: boolean;
  /**
   * Whether ddd-kit's statements on `pool` are prepared: parsed and planned once per connection
   * (default true). False behind a pooler that does not keep prepared statements (PgBouncer in
   * transaction mode before 1.21, or without `max_prepared_statements`). It is the pool's
   * setting: every ddd-kit part on that pool follows it.
   */
  preparedStatements?: boolean;
}

/** Throws RepositoryConfigurationError for options of a PostgresRepository (`where`) that cannot work. */
export function checkPostgresRepositoryOptions(where: string, options: PostgresRepositoryOptions<any>): void {
  const { pool, table, foreignTransaction, createTables, preparedStatements } = options;
  if (
    pool !== undefined &&
    pool !== null &&
    (typeof (pool as Partial<Pool>).query !== 'function' || typeof (pool as Partial<Pool>).connect !== 'function')
  ) {
    throw new RepositoryConfigurationError(`${where}: pool must be a pg.Pool`);
  }
  if (table !== undefined) quoteTableName(table, `${where}: table`);
  if (foreignTransaction !== undefined && foreignTransaction !== 'refuse' && foreignTransaction !== 'autocommit')
    throw new RepositoryConfigurationError(`${where}: foreignTransaction must be 'refuse' or 'autocommit'`);
  if (createTables !== undefined && typeof createTables !== 'boolean')
    throw new RepositoryConfigurationError(`${where}: createTables must be a boolean`);
  if (preparedStatements !== undefined && typeof preparedStatements !== 'boolean')
    throw new RepositoryConfigurationError(`${where}: preparedStatements must be a boolean`);
  if (preparedStatements !== undefined && (pool === undefined || pool === null))
    throw new RepositoryConfigurationError(`${where}: preparedStatements is a setting of the pool: pass it with pool`);
}

/**
 * The error of a PostgresRepository (`where`) without a pool: at bootstrap (`module`: RepositoryModule
 * has none to give), or when used (`repository`: it was never given one).
 */
export function missingPoolError(where: string, at: 'module' | 'repository'): RepositoryConfigurationError {
  return new RepositoryConfigurationError(
    at === 'module'
      ? `${where} is a PostgresRepository but RepositoryModule has no PostgreSQL pool: pass { postgres: { url } } or ` +
          '{ postgres: { pool } } to RepositoryModule.forRoot / forRootAsync.'
      : `${where} has no PostgreSQL pool: register it with RepositoryModule.forFeature after ` +
          'RepositoryModule.forRoot({ postgres: { url } or { pool } }), or pass { pool } to its constructor.',
  );
}
