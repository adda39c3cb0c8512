import { Logger } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { ambientStorage, PgTransactionContext } from './pg-ambient-transaction.js';

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
  if (typeof options !== 'object') throw new TypeError(`transaction options must be an object, got ${String(options)}`);
  const { isolationLevel, readOnly } = options;
  let sql = 'BEGIN';
  if (isolationLevel !== undefined) {
    if (typeof isolationLevel !== 'string' || !ISOLATION_LEVELS.has(isolationLevel)) {
      throw new TypeError(
        `isolationLevel must be one of ${[...ISOLATION_LEVELS].join(', ')}; got ${JSON.stringify(isolationLevel)}`,
      );
    }
    sql += ` ISOLATION LEVEL ${isolationLevel}`;
  }
  if (readOnly !== undefined) {
    if (typeof readOnly !== 'boolean')
      throw new TypeError(`readOnly must be a boolean, got ${JSON.stringify(readOnly)}`);
    sql += readOnly ? ' READ ONLY' : ' READ WRITE';
  }
  return sql;
}

export function assertPool(pool: unknown, where: string): asserts pool is Pool {
  const candidate = pool as Partial<Pool> | null | undefined;
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    typeof candidate.connect !== 'function' ||
    typeof candidate.query !== 'function'
  ) {
    throw new TypeError(
      `${where} needs a pg.Pool (new Pool({ connectionString })), got ${candidate === null ? 'null' : typeof candidate}`,
    );
  }
}

/**
 * One transaction on a connection of its own: BEGIN, `fn` with the transaction published as
 * the ambient one, then COMMIT — or ROLLBACK when `fn` throws. After a commit, what waited for
 * it runs (outside the transaction). The connection goes back to the pool when all is settled,
 * or is destroyed when it failed (a lost connection, a failed COMMIT or ROLLBACK) so nothing
 * half-finished is ever reused.
 *
 * Outcome under faults: an error from `fn` or BEGIN means nothing committed. An error from
 * COMMIT itself (the connection lost while it was in flight) leaves the outcome unknown: the
 * server may have committed. Nothing here retries.
 */
export async function runTransaction<R>(
  pool: Pool,
  options: PgTransactionOptions | undefined,
  fn: (context: PgTransactionContext) => Promise<R>,
  hooks: { beforeAfterCommit?: () => void } = {},
): Promise<R> {
  const begin = beginStatement(options);
  const client: PoolClient = await pool.connect();
  // A checked-out client that loses its connection emits 'error'; unheard, it would end the
  // process. The failure reaches the statement in flight (or the next one) anyway.
  const onError = (): void => undefined;
  client.on('error', onError);
  const release = (broken?: unknown): void => {
    client.removeListener('error', onError);
    client.release(broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
  };

  try {
    await client.query(begin);
  } catch (error) {
    release(error);
    throw error;
  }

  const context = new PgTransactionContext(pool, client, ambientStorage.getStore());
  let result: R;
  try {
    result = await ambientStorage.run(context, () => fn(context));
  } catch (error) {
    context.end();
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
  release();
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
