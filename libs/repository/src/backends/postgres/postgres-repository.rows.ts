import type { AggregateRoot } from '../../aggregate/aggregate-root.js';
import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import { InvalidAggregateIdError, RepositoryConfigurationError, RepositoryError } from '../../errors.js';
import type { LoadedAggregate } from '../../repository/repository.interfaces.js';
import {
  pushRowValues,
  type PostgresIdType,
  type PostgresRepositoryStatements,
  type PostgresWriteOperation,
  type StoredRow,
} from './postgres-repository.statements.js';
import { quoteIdentifier } from './postgres-sql.utils.js';

// What PostgresRepository binds and reads back, and what it checks of those values.

/**
 * What the codec needs of its repository: its declaration and mapping, read on each call (the
 * subclass's getters may be overridden, and its mapping methods are its own).
 */
export interface PostgresRowMapping<ID extends AggregateId, T, Row> {
  /** The repository's class name, for messages. */
  readonly owner: string;
  idType(): PostgresIdType;
  versionColumn(): string;
  aggregateName(): string;
  toRow(aggregate: T): Row;
  toAggregate(row: StoredRow<ID, Row>): T;
}

/** How one PostgresRepository's aggregates become bound values, and rows become aggregates again. */
export class PostgresRowCodec<ID extends AggregateId, T extends AggregateRoot<ID, any>, Row> {
  constructor(private readonly mapping: PostgresRowMapping<ID, T, Row>) {}

  /** The id as it is bound: refused (nothing sent) when the id column cannot hold it as it is. */
  id(id: ID): ID {
    return checkBoundId(this.mapping.idType(), this.mapping.aggregateName(), id);
  }

  /** The ids among `ids` that the id column can hold (the others are stored nowhere). */
  bindable(ids: readonly ID[]): ID[] {
    const idType = this.mapping.idType();
    return ids.filter((id) => (idType === 'bigint' ? Number.isSafeInteger(id) : typeof id === 'string'));
  }

  /**
   * The values of `operation`'s statement (see buildStatements): the checked `id`, the version it
   * expects (an insert's: the new one), the row's columns (json/jsonb serialised), then an
   * update's new version.
   */
  values(operation: PostgresWriteOperation, id: ID, aggregate: T, s: PostgresRepositoryStatements): unknown[] {
    const values: unknown[] = [id, operation === 'insert' ? aggregate.newVersion : aggregate.oldVersion];
    if (operation !== 'remove')
      pushRowValues(values, s, this.mapping.toRow(aggregate) as Record<string, unknown>, this.mapping.owner);
    if (operation === 'update') values.push(aggregate.newVersion);
    return values;
  }

  /** The aggregate a row read by `id` holds, with its version. */
  loaded(row: Record<string, unknown>, id: ID): LoadedAggregate<T> {
    const version = this.version(row.version, id);
    row.id = this.mapping.idType() === 'bigint' ? Number(row.id) : row.id;
    row.version = version;
    return { aggregate: this.mapping.toAggregate(row as StoredRow<ID, Row>), version };
  }

  /** The version read from a row (see storedVersion). */
  version(value: unknown, id: ID): number {
    return storedVersion(value, this.mapping.versionColumn(), this.mapping.aggregateName(), id);
  }
}

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
