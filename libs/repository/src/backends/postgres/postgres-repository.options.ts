import type { Pool } from 'pg';
import type { AggregateRoot } from '../../aggregate/aggregate-root.js';
import { RepositoryConfigurationError } from '../../errors/repository-configuration.error.js';
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
}

/** Throws RepositoryConfigurationError for options of a PostgresRepository (`where`) that cannot work. */
export function checkPostgresRepositoryOptions(where: string, options: PostgresRepositoryOptions<any>): void {
  const { pool, table, foreignTransaction, createTables } = options;
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
}
