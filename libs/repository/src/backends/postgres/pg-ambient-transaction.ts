import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The transaction a use case is running in, as every PostgreSQL part of ddd-kit publishes it:
 * one AsyncLocalStorage kept on globalThis under a registered symbol, so the repository finds
 * a transaction started by `@ddd-kit/transactional-adapter-pg` (or anything following the same
 * protocol) without importing it. Each library keeps its own copy of these few lines.
 */
export interface AmbientPgTransaction {
  /** The pg.Pool the transaction was started from: the key a part matches its own pool against. */
  readonly pool: object;
  /** The connected client inside BEGIN … COMMIT. */
  readonly client: PgQueryable;
  /** An enclosing transaction (on another pool, or suspended by REQUIRES_NEW on the same one). */
  readonly outer?: AmbientPgTransaction;
  /** Runs a callback once the transaction committed (optional: a publisher without it gets none). */
  readonly afterCommit?: (callback: () => unknown) => void;
}

/** What runs a statement: a pg.Pool (autocommit) or a client inside a transaction. */
export interface PgQueryable {
  query(...args: any[]): Promise<any>;
}

const KEY = Symbol.for('@ddd-kit/pg-ambient-transaction');
const holder = globalThis as unknown as { [KEY]?: AsyncLocalStorage<AmbientPgTransaction> };
const storage: AsyncLocalStorage<AmbientPgTransaction> = (holder[KEY] ??=
  new AsyncLocalStorage<AmbientPgTransaction>());

/** The innermost ambient transaction started from `pool`, or undefined. */
export function ambientTransactionFor(pool: object): AmbientPgTransaction | undefined {
  for (let t = storage.getStore(); t !== undefined; t = t.outer) if (t.pool === pool) return t;
  return undefined;
}

/** The client of the innermost ambient transaction started from `pool`, or undefined. */
export function ambientClientFor(pool: object): PgQueryable | undefined {
  return ambientTransactionFor(pool)?.client;
}

/** Runs `fn` with `transaction` as the innermost ambient one (the enclosing one as its `outer`). */
export function runInAmbientTransaction<R>(
  transaction: Omit<AmbientPgTransaction, 'outer'>,
  fn: () => Promise<R>,
): Promise<R> {
  return storage.run({ ...transaction, outer: storage.getStore() }, fn);
}
