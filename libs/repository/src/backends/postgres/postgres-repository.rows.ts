import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import { InvalidAggregateIdError, RepositoryConfigurationError, RepositoryError } from '../../errors.js';
import type { PostgresIdType } from './postgres-repository.statements.js';
import { quoteIdentifier } from './postgres-sql.utils.js';

// What PostgresRepository checks of the values it binds and reads back.

const UNDEFINED_TABLE = '42P01';

/** `id` as it is bound: refused (nothing sent) when the id column cannot hold it as it is. */
export function checkBoundId<ID extends AggregateId>(idType: PostgresIdType, aggregate: string, id: ID): ID {
  if (idType === 'bigint' ? Number.isSafeInteger(id) : typeof id === 'string') return id;
  throw new InvalidAggregateIdError(
    aggregate,
    id,
    idType === 'bigint'
      ? 'this repository stores bigint ids: an id must be a safe integer'
      : "this repository stores text ids: an id must be a string (a number would come back as a string; use idType 'bigint' for numeric ids)",
  );
}

/** The version read from a row (bigint comes back as a string): a positive integer, or an error naming the row. */
export function storedVersion(value: unknown, versionColumn: string, aggregate: string, id: AggregateId): number {
  const version = typeof value === 'string' || typeof value === 'bigint' ? Number(value) : value;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw new RepositoryError(
      `${aggregate} ${JSON.stringify(id)}: the stored row has no valid ${quoteIdentifier(versionColumn, 'versionColumn')} ` +
        '(a positive integer); it was not written by this repository.',
    );
  }
  return version;
}

/** A missing table is a setup mistake: say what to do. Everything else passes through as the driver raised it. */
export function explainMissingTable(error: unknown, where: string, table: string): unknown {
  if ((error as { code?: string } | null)?.code !== UNDEFINED_TABLE) return error;
  return new RepositoryConfigurationError(
    `${where}: table ${table} does not exist. Create it in a migration (collectSchemaStatements() from ` +
      '@ddd-kit/core/postgres gives every table of the app, createTableStatement() this one) ' +
      'or let the repository create it at start-up (createTables: true, the default).',
    { cause: error },
  );
}
