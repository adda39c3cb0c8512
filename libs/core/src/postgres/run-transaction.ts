import { Logger } from '@nestjs/common';
import { ambientStorage, PgTransactionContext } from './ambient-transaction.js';
import type { PgPool, PgPoolClient } from './pg.interfaces.js';
import { guardPool } from './pool.js';
import { PgArgumentError } from '../errors.js';

export type PgIsolationLevel = 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

/** How a transaction starts (`BEGIN ISOLATION LEVEL … READ ONLY`). Unset: the server's defaults. */
export interface PgTransactionOptions {
  isolationLevel?: PgIsolationLevel;
  readOnly?: boolean;
}

const ISOLATION_LEVELS: ReadonlySet<string> = new Set<PgIsolationLevel>([
  'READ UNCOMMITTED',
  'READ COMMITTED',
  'REPEATABLE READ',
  'SERIALIZABLE',
]);

const logger = new Logger('PgTransaction');

/**
 * The BEGIN statement for `options`, after checking them: only the four level names and a
 * boolean ever reach the SQL text.
 */
export function beginStatement(options: PgTransactionOptions | undefined): string {
  if (options === undefined || options === null) return 'BEGIN';
  if (typeof options !== 'object')
    throw new PgArgumentError(`transaction options must be an object, got ${String(options)}`);
  const { isolationLevel, readOnly } = options;
  let sql = 'BEGIN';
  if (isolationLevel !== undefined) {
    if (typeof isolationLevel !== 'string' || !ISOLATION_LEVELS.has(isolationLevel)) {
      throw new PgArgumentError(
        `isolationLevel must be one of ${[...ISOLATION_LEVELS].join(', ')}; got ${JSON.stringify(isolationLevel)}`,
      );
    }
    sql += ` ISOLATION LEVEL ${isolationLevel}`;
  }
  if (readOnly !== undefined) {
    if (typeof readOnly !== 'boolean')
      throw new PgArgumentError(`readOnly must be a boolean, got ${JSON.stringify(readOnly)}`);
    sql += readOnly ? ' READ ONLY' : ' READ WRITE';
  }
  return sql;
}

/** Refuses what is not a pg.Pool before anything is sent, and guards its connections (guardPool). */
export function assertPool(pool: unknown, where: string): asserts pool is PgPool {
  const candidate = pool as Partial<PgPool> | null | undefined;
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    typeof candidate.connect !== 'function' ||
    typeof candidate.query !== 'function'
  ) {
    throw new PgArgumentError(
      `${where} needs a pg.Pool (new Pool({ connectionString })), got ${candidate === null ? 'null' : typeof candidate}`,
    );
  }
  guardPool(candidate);
}

export interface RunTransactionHooks {
  /** A part's own transaction for its own statements, not a use case's (see AmbientPgTransaction.local). */
  local?: boolean;
  /** Called between COMMIT and the after-commit callbacks (the nestjs-cls adapter clears `tx` there). */
  beforeAfterCommit?: () => void;
}

/**
 * The one way ddd-kit runs a transaction on a connection of its own: BEGIN, `fn` with the
 * transaction published as the ambient one, then COMMIT — or ROLLBACK when `fn` throws. After
 * a commit, what waited for it runs (outside the transaction).
 *
 * The connection goes back to the pool only when the server answered everything on it: a
 * failed BEGIN, COMMIT or ROLLBACK, or a statement that failed without an answer (a lost
 * connection, a timeout: the server may still be running it), destroys the connection instead,
 * and the server rolls back what it held. Nothing half-finished is ever handed to the pool's next
 * user, and no ROLLBACK waits on a server that stopped answering.
 *
 * Outcome under faults: an error from `fn` or BEGIN means nothing committed. An error from
 * COMMIT itself (the connection lost while it was in flight) leaves the outcome unknown: the
 * server may have committed. Nothing here retries.
 */
export async function runTransaction<R>(
  pool: PgPool,
  options: PgTransactionOptions | undefined,
  fn: (context: PgTransactionContext) => Promise<R>,
  hooks: RunTransactionHooks = {},
): Promise<R> {
  const begin = beginStatement(options);
  // The listener below comes a turn after pg-pool handed the connection over: guardPool covers that turn.
  guardPool(pool);
  const client: PgPoolClient = await pool.connect();
  let lost = false;
  // A checked-out client that loses its connection emits 'error'; unheard, it would end the
  // process. The failure reaches the statement in flight (or the next one) anyway.
  const onError = (): void => void (lost = true);
  client.on('error', onError);
  const release = (broken?: unknown): void => {
    // A destroyed connection keeps the listener, for an 'error' the closing socket may still emit.
    if (broken === undefined) client.removeListener('error', onError);
    client.release(broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
  };

  try {
    await client.query(begin);
  } catch (error) {
    release(error);
    throw error;
  }

  const context = new PgTransactionContext(pool, client, ambientStorage.getStore(), hooks.local);
  let result: R;
  try {
    result = await ambientStorage.run(context, () => fn(context));
  } catch (error) {
    context.end();
    if (lost || context.broken) {
      release(error);
      throw error;
    }
    let broken: unknown;
    await client.query('ROLLBACK').catch((rollbackError: unknown) => void (broken = rollbackError));
    release(broken);
    throw error;
  }

  context.end();
  try {
    await client.query('COMMIT');
  } catch (error) {
    // Either the server refused (the transaction is rolled back) or the connection failed
    // with the outcome unknown; in both cases the connection is not reused.
    release(error);
    throw error;
  }
  release(lost ? new Error('the connection reported an error during the transaction') : undefined);
  hooks.beforeAfterCommit?.();
  const errors = await context.runAfterCommit();
  for (const error of errors) {
    logger.error(
      'A callback waiting for a commit failed (the transaction is committed)',
      error instanceof Error ? error.stack : String(error),
    );
  }
  return result;
}
