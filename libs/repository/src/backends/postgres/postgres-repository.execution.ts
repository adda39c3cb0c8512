import {
  runTransaction,
  type PgPool,
  type PgQueryable,
  type PgQueryConfig,
  type PgResult,
} from '@ddd-kit/core/postgres';
import type { Pool, QueryResult } from 'pg';
import type { PostgresStatement } from './postgres-repository.statements.js';

// How PostgresRepository runs its statements (see PostgresRepository.executeWrite). `fail`
// throws the error a driver error stands for (a missing table: a configuration error); the
// repository makes it once, so that no statement allocates a handler of its own for it.

/** Throws the error to report for a driver error. */
export type FailWith = (error: unknown) => never;

export const NO_STATEMENTS: readonly PostgresStatement[] = Object.freeze([]);

/** Sends `statement` on `queryable`: by name when it has one (prepared), else as text and values. */
export function send(queryable: PgQueryable, statement: PostgresStatement): Promise<PgResult> {
  return statement.name === undefined
    ? queryable.query(statement.text, statement.values as unknown[] | undefined)
    : queryable.query(statement as PgQueryConfig);
}

/** The result as it came (the `settle` of a caller with nothing to check). */
export const asResult = <R>(result: R): R => result;

/**
 * One statement on `queryable`, its result handed to `settle` in the step that receives it: a
 * driver error goes to `fail`, what `settle` throws does not. Not `async`: on the hot path (every
 * load and write) an async frame and its await would add a promise step of their own.
 */
export function runStatement<R extends Record<string, any>, S>(
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

/** The write and, only when it matched a row, the statements alongside it; resolves the write's result. */
async function runWrite(
  queryable: PgQueryable,
  write: PostgresStatement,
  alongside: readonly PostgresStatement[],
  fail: FailWith,
): Promise<PgResult> {
  const result = await runStatement(queryable, write, fail, asResult);
  if (result.rowCount === 0) return result;
  for (const statement of alongside) await send(queryable, statement);
  return result;
}

/**
 * The write where the repository's statements run (`queryable`: the ambient transaction's
 * client, else `pool`): in the ambient transaction as they come; on the pool, a lone statement
 * autocommitted, several in a transaction of their own. Resolves what `settle` makes of the
 * write's result (after the commit of a transaction opened here): a row count of 0 means it
 * matched nothing.
 */
export function executeWriteOn<S>(
  pool: Pool,
  queryable: PgQueryable,
  write: PostgresStatement,
  alongside: readonly PostgresStatement[],
  fail: FailWith,
  settle: (result: PgResult) => S,
): Promise<S> {
  if (queryable !== pool) return runWrite(queryable, write, alongside, fail).then(settle);
  if (alongside.length === 0) return runStatement(pool as PgQueryable, write, fail, settle);
  return runTransaction(pool as PgPool, undefined, (context) => runWrite(context.guarded, write, alongside, fail), {
    local: true,
  }).then(settle);
}
