import type { Pool, PoolClient } from 'pg';
import {
  activeTransactionFor,
  assertPool,
  beginStatement,
  PgTransactionContext,
  runTransaction,
  type PgTransactionOptions,
} from '@ddd-kit/core/postgres';

export interface RunInTransactionOptions extends PgTransactionOptions {
  /**
   * `'required'` (default): join the transaction already running on this pool, if any (its
   * options stay as they are), else start one. `'requiresNew'`: always start one, on another
   * connection, committed on its own whatever the enclosing one does.
   */
  propagation?: 'required' | 'requiresNew';
}

/**
 * Runs `fn` in a transaction on `pool`, for code outside Nest (scripts, workers, tests):
 * BEGIN, `fn(client)`, COMMIT — ROLLBACK when it throws, and the error is rethrown. While `fn`
 * runs, every ddd-kit PostgreSQL part on the same pool (PostgresRepository, the PostgreSQL
 * PrepareKey, …) joins the transaction on its own; `client` is there for your own statements.
 *
 *   await runInTransaction(pool, async (client) => {
 *     await users.insert(user);                                  // joins
 *     await client.query('INSERT INTO audit (what) VALUES ($1)', ['signup']);
 *   }, { isolationLevel: 'SERIALIZABLE' });
 */
export async function runInTransaction<R>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<R>,
  options: RunInTransactionOptions = {},
): Promise<R> {
  assertPool(pool, 'runInTransaction');
  if (typeof fn !== 'function') throw new TypeError('runInTransaction needs a function to run');
  const { propagation = 'required', ...transactionOptions } = options ?? {};
  if (propagation !== 'required' && propagation !== 'requiresNew') {
    throw new TypeError(`propagation must be 'required' or 'requiresNew', got ${JSON.stringify(propagation)}`);
  }
  beginStatement(transactionOptions); // options are checked even when the transaction is joined
  if (propagation === 'required') {
    const running = activeTransactionFor(pool);
    if (running !== undefined)
      return fn((running instanceof PgTransactionContext ? running.guarded : running.client) as PoolClient);
  }
  return runTransaction(pool, transactionOptions, (context) => fn(context.guarded as PoolClient));
}
