import {
  preparedStatement,
  queryableFor,
  runTransaction,
  type PgPool,
  type PgQueryable,
  type PgQueryConfig,
  type PgResult,
  type QueryableOptions,
} from '@ddd-kit/core/postgres';
import type { Pool, QueryResult } from 'pg';
import type { PostgresStatement } from './postgres-repository.statements.js';

// How PostgresRepository runs its statements, one verb per operation: `send` hands one statement
// to the driver, `query` sends one and settles its result (every read, and a write's own
// statement), `write` runs a conditional write with the statements that commit with it (see
// PostgresRepository.write); PostgresStatementRunner does the last two where the repository's
// statements run. `fail` throws the error a driver error stands for (a missing table: a
// configuration error).

/** Throws the error to report for a driver error. */
export type FailWith = (error: unknown) => never;

export const NO_STATEMENTS: readonly PostgresStatement[] = Object.freeze([]);

/** Sends `statement` on `queryable`: by name when it has one (prepared), else as text and values. */
export function send(queryable: PgQueryable, statement: PostgresStatement): Promise<PgResult> {
  return statement.name === undefined
    ? queryable.query(statement.text, statement.values as unknown[] | undefined)
    : queryable.query(statement as PgQueryConfig);
}

/** Whether a conditional write matched its row (the `settle` of PostgresRepository.write). */
export const matched = (result: PgResult): boolean => result.rowCount !== 0;

/** The result as it came (the `settle` of a caller with nothing to check). */
export const asResult = <R>(result: R): R => result;

/**
 * One statement on `queryable`, its result handed to `settle` in the step that receives it: a
 * driver error goes to `fail`, what `settle` throws does not. Not `async`: on the hot path (every
 * load and write) an async frame and its await would add a promise step of their own.
 */
export function query<R extends Record<string, any>, S>(
  queryable: PgQueryable,
  statement: PostgresStatement,
  fail: FailWith,
  settle: (result: QueryResult<R>) => S,
): Promise<S> {
  let sent: Promise<QueryResult<R>>;
  try {
    sent = send(queryable, statement) as Promise<QueryResult<R>>;
  } catch (error) {
    sent = Promise.reject(error);
  }
  return sent.then(settle, fail);
}

/**
 * The write and, only when it matched a row, the statements alongside it, all on `queryable` (a
 * transaction's client): no transaction of its own. Resolves the write's result.
 */
async function writeIn(
  queryable: PgQueryable,
  statement: PostgresStatement,
  alongside: readonly PostgresStatement[],
  fail: FailWith,
): Promise<PgResult> {
  const result = await query(queryable, statement, fail, asResult);
  if (result.rowCount === 0) return result;
  for (const other of alongside) await send(queryable, other);
  return result;
}

/**
 * The conditional write `statement` and the statements `alongside` it, where the repository's
 * statements run (`queryable`: the ambient transaction's client, else `pool`): in the ambient
 * transaction as they come; on the pool, a lone statement autocommitted, several in a
 * transaction of their own. Resolves what `settle` makes of the
 * write's result (after the commit of a transaction opened here): a row count of 0 means it
 * matched nothing.
 */
export function write<S>(
  pool: Pool,
  queryable: PgQueryable,
  statement: PostgresStatement,
  alongside: readonly PostgresStatement[],
  fail: FailWith,
  settle: (result: PgResult) => S,
): Promise<S> {
  if (queryable !== pool) return writeIn(queryable, statement, alongside, fail).then(settle);
  if (alongside.length === 0) return query(pool as PgQueryable, statement, fail, settle);
  return runTransaction(pool as PgPool, undefined, (context) => writeIn(context.guarded, statement, alongside, fail), {
    local: true,
  }).then(settle);
}

/**
 * Where one PostgresRepository's statements run: on the client of the ambient transaction
 * started from its pool when there is one, else on the pool (autocommit). Made once per
 * repository, so that no statement allocates its driver-error handler (`fail`).
 */
export class PostgresStatementRunner {
  constructor(
    /** The repository's class name, for messages. */
    private readonly owner: string,
    /** The repository's pool; throws when none is configured. */
    private readonly pool: () => Pool,
    /** `foreignTransaction`, as queryableFor takes it. */
    private readonly options: () => QueryableOptions | undefined,
    private readonly fail: FailWith,
  ) {}

  /** Where statements run now: the ambient transaction's client, else the pool (see @ddd-kit/core/postgres). */
  queryable(): PgQueryable {
    return queryableFor(this.pool(), this.owner, this.options());
  }

  /** One of the repository's own statements, prepared (its text is fixed by the declaration). */
  prepared(text: string, values: unknown[]): PostgresStatement {
    return preparedStatement(this.pool(), text, values);
  }

  /**
   * `work` in one transaction with the writes it makes: the ambient one when there is one on the
   * pool, else one opened here. Inside another pool's transaction queryable() throws: committing
   * on its own would split one transaction in two.
   */
  inUnitOfWork<R>(work: () => Promise<R>): Promise<R> {
    const pool = this.pool();
    if (this.queryable() !== pool) return work();
    return runTransaction(pool as PgPool, undefined, () => work(), { local: true });
  }

  /** A read (see query above). */
  query<R extends Record<string, any>, S>(
    statement: PostgresStatement,
    settle: (result: QueryResult<R>) => S,
  ): Promise<S> {
    return query<R, S>(this.queryable(), statement, this.fail, settle);
  }

  /** A conditional write and what commits with it (see write above). */
  write<S>(
    statement: PostgresStatement,
    alongside: readonly PostgresStatement[],
    settle: (result: PgResult) => S,
  ): Promise<S> {
    return write(this.pool(), this.queryable(), statement, alongside, this.fail, settle);
  }
}
