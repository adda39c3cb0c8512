import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolClient } from 'pg';

/**
 * The ambient transaction as every PostgreSQL part of ddd-kit reads it: one AsyncLocalStorage
 * kept on globalThis under a registered symbol, so a part finds the transaction without
 * importing this package (each keeps a copy of the few lines that read it):
 *
 *   for (let t = storage.getStore(); t; t = t.outer) if (t.pool === pool) return t.client;
 *   return pool;
 */
export interface AmbientPgTransaction {
  /** The pg.Pool the transaction was started from: the key a part matches its own pool against. */
  readonly pool: object;
  /** The connected client inside BEGIN … COMMIT. */
  readonly client: { query(...args: any[]): Promise<any> };
  /** The enclosing transaction, if any (on another pool, or suspended by REQUIRES_NEW on this one). */
  readonly outer?: AmbientPgTransaction;
  /**
   * Runs `callback` once the transaction has committed (never when it rolls back). Parts that
   * announce a write in process (the repository's data-sync events) defer the announcement
   * here, so a rollback leaves no ghost. Optional in the protocol: without it, they announce at once.
   */
  readonly afterCommit?: (callback: () => unknown) => void;
}

const KEY = Symbol.for('@ddd-kit/pg-ambient-transaction');
const holder = globalThis as unknown as { [KEY]?: AsyncLocalStorage<AmbientPgTransaction> };
export const ambientStorage: AsyncLocalStorage<AmbientPgTransaction> = (holder[KEY] ??=
  new AsyncLocalStorage<AmbientPgTransaction>());

/** What a statement meets after its transaction ended: an error, never a connection someone else may hold now. */
class EndedTransactionClient {
  query(): Promise<never> {
    return Promise.reject(
      new Error(
        'The PostgreSQL transaction this code was started in has ended (committed or rolled back): ' +
          'work left running after a transaction cannot join it. Await it inside the transaction, or start one of its own.',
      ),
    );
  }
}
const ENDED = new EndedTransactionClient();

/**
 * One transaction as this package publishes it. `client` is the transaction's connection while
 * it runs; the pool itself while nestjs-cls has suspended it (NOT_SUPPORTED and friends), so
 * the code in between autocommits as it asked; a rejecting stand-in once it has ended, so late
 * work never writes through a connection returned to the pool.
 */
export class PgTransactionContext implements AmbientPgTransaction {
  private ended = false;
  private readonly callbacks: Array<() => unknown> = [];
  private savepoints = 0;
  /** Set by the nestjs-cls adapter: true while the CLS context says "no transaction". */
  suspended?: () => boolean;

  constructor(
    readonly pool: Pool,
    readonly connection: PoolClient,
    readonly outer: AmbientPgTransaction | undefined,
  ) {}

  get client(): { query(...args: any[]): Promise<any> } {
    if (this.ended) return ENDED;
    if (this.suspended?.()) return this.pool;
    return this.connection;
  }

  /** True while statements reach the transaction's connection. */
  get active(): boolean {
    return !this.ended && !this.suspended?.();
  }

  readonly afterCommit = (callback: () => unknown): void => {
    if (this.ended) throw new Error('afterCommit: the transaction has already ended');
    this.callbacks.push(callback);
  };

  /** From now on, statements are refused. */
  end(): void {
    this.ended = true;
  }

  /** Runs (and forgets) what waited for the commit, one after another; a failing callback does not stop the others. */
  async runAfterCommit(): Promise<unknown[]> {
    const errors: unknown[] = [];
    for (const callback of this.callbacks.splice(0)) {
      try {
        await callback();
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }

  /**
   * Runs `fn` inside a savepoint: its statements are undone (and its after-commit callbacks
   * dropped) when it throws, while the transaction goes on. Savepoints of one transaction
   * must not run concurrently: statements on one connection interleave.
   */
  async withSavepoint<R>(fn: () => Promise<R>): Promise<R> {
    const name = `ddd_kit_savepoint_${++this.savepoints}`;
    await this.connection.query(`SAVEPOINT ${name}`);
    const mark = this.callbacks.length;
    let result: R;
    try {
      result = await fn();
    } catch (error) {
      this.callbacks.length = Math.min(this.callbacks.length, mark);
      // If this fails too, the connection is gone and the whole transaction fails with it.
      await this.connection.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    }
    await this.connection.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  }
}

/** The innermost transaction started from `pool` that statements reach now, if any. */
export function activeTransactionFor(pool: Pool): PgTransactionContext | undefined {
  for (let t = ambientStorage.getStore(); t !== undefined; t = t.outer) {
    if (t.pool !== pool) continue;
    return t instanceof PgTransactionContext && t.active ? t : undefined;
  }
  return undefined;
}
