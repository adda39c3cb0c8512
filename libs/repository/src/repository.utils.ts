import { getQualifiedAggregateName } from './aggregate/aggregate-name.utils.js';
import type { AggregateClass } from './aggregate/aggregate-root.js';
import { REPOSITORY_POSTGRES_POOL } from './repository.constants.js';

/**
 * The token `@InjectRepository(aggregate)` injects: `<name>Repository`, where the name is the
 * `@Aggregate` name (prefixed with its context outside the default one) or the class name.
 */
export function getRepositoryToken(aggregate: AggregateClass | string): string {
  if (typeof aggregate === 'string') return `${aggregate}Repository`;
  if (typeof aggregate !== 'function') {
    throw new TypeError(
      `getRepositoryToken needs an aggregate class or name, got ${String(aggregate)} (a circular import?)`,
    );
  }
  return `${getQualifiedAggregateName(aggregate)}Repository`;
}

/**
 * The token of the pg.Pool RepositoryModule uses for PostgresRepository subclasses (the one it
 * opened from `postgres.url`, or yours): give it to `TransactionalAdapterPg({ poolToken })` so
 * `@Transactional()` starts transactions the repositories join. `null` without PostgreSQL.
 */
export function getRepositoryPoolToken(): symbol {
  return REPOSITORY_POSTGRES_POOL;
}
