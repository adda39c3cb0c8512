import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import { addTransactionSource, ENDED, outsideTransaction, type AmbientPgTransaction } from './ambient-transaction.js';
import type { PgPool, PgQueryable, PgQueryConfig } from './pg.interfaces.js';
import { PgArgumentError, PgConfigurationError, PgTransactionEndedError } from '../errors.js';

/** What ddd-kit knows of one ORM to run its statements in that ORM's transactions. */
export interface OrmTransactionSeam {
  /** The ORM, as errors name it. */
  readonly orm: string;
  /** The pg.Pool behind `instance`, the ORM's non-transactional instance (nestjs-cls's fallback). */
  poolOf(instance: unknown): PgPool;
  /** The pg connection under `tx`, a transaction object the ORM handed out. */
  connectionOf(tx: unknown): PgQueryable;
}

/** What joinOrmTransactions returns. */
export interface JoinedOrmTransactions {
  /** The pool the ORM's transactions are started from: give it to the ddd-kit parts. */
  readonly pool: PgPool;
  /** Stops joining (the instance's `transaction` is restored). */
  detach(): void;
}

const logger = new Logger('OrmTransaction');

/** One transaction (or savepoint with an object of its own) an ORM opened, as ddd-kit's parts see it. */
class OrmTransaction implements AmbientPgTransaction {
  ended = false;
  readonly callbacks: Array<() => unknown> = [];
  private readonly guarded: PgQueryable;

  constructor(
    readonly pool: PgPool,
    connection: () => PgQueryable,
    private readonly parent?: OrmTransaction,
  ) {
    // Checked at each call: a client kept past the end is refused, not run on a pooled connection.
    this.guarded = {
      query: (text: string | PgQueryConfig, values?: unknown[]) => {
        if (!this.active) return ENDED.query(text, values);
        try {
          return connection().query(text, values);
        } catch (error) {
          return Promise.reject(error as Error);
        }
      },
    };
  }

  get active(): boolean {
    return !this.ended && (this.parent?.active ?? true);
  }

  get client(): PgQueryable {
    return this.active ? this.guarded : ENDED;
  }

  readonly afterCommit = (callback: () => unknown): void => {
    if (!this.active) throw new PgTransactionEndedError();
    this.callbacks.push(callback);
  };
}

/**
 * Joins the transactions an ORM opens with `instance.transaction(…)` (as nestjs-cls's adapters
 * do): while one runs, every ddd-kit PostgreSQL part on the ORM's pool sends its statements on
 * that transaction's connection; after it ended they are refused. `current` says which ORM
 * transaction object the calling code runs in (nestjs-cls: `txHost.tx` while a transaction is
 * active), so propagation stays the adapter's. `instance.transaction` is wrapped only to see
 * where each transaction begins and ends, and to run what waits for its commit.
 */
export function joinOrmTransactions(
  seam: OrmTransactionSeam,
  instance: object,
  current: () => unknown,
): JoinedOrmTransactions {
  if (instance === null || typeof instance !== 'object' || typeof (instance as Tx).transaction !== 'function')
    throw new PgArgumentError(
      `${seam.orm}: joining its transactions needs the instance whose transaction() opens them`,
    );
  const pool = seam.poolOf(instance);
  const transactions = new WeakMap<object, OrmTransaction>();
  // The transaction a piece of code was started in: nestjs-cls forgets `tx` once it ended, and
  // work left running after it would otherwise autocommit unnoticed.
  const scope = new AsyncLocalStorage<OrmTransaction>();

  const wrap = (target: Tx, parent: OrmTransaction | undefined): void => {
    const original = target.transaction;
    target.transaction = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const at = args.findIndex((arg) => typeof arg === 'function');
      if (at < 0) return original.apply(this, args);
      const fn = args[at] as (tx: Tx) => Promise<unknown>;
      let opened: OrmTransaction | undefined;
      args[at] = async (tx: Tx) => {
        const known = transactions.get(tx);
        if (known !== undefined) return savepoint(known, () => fn(tx)); // TypeORM: the same manager
        opened = new OrmTransaction(pool, () => seam.connectionOf(tx), parent);
        transactions.set(tx, opened);
        if (tx !== target && typeof tx?.transaction === 'function') wrap(tx, opened);
        try {
          return await scope.run(opened, () => fn(tx));
        } finally {
          opened.ended = true; // before COMMIT or ROLLBACK is sent: nothing may slip in after it
        }
      };
      return original.apply(this, args).then(async (result) => {
        if (opened === undefined) return result;
        if (parent !== undefined)
          parent.callbacks.push(...opened.callbacks); // a savepoint released
        else await outsideTransaction(() => runAfterCommit(opened!.callbacks.splice(0)));
        return result;
      });
    };
  };
  const root = instance as Tx;
  const hadOwn = Object.prototype.hasOwnProperty.call(root, 'transaction');
  const original = root.transaction;
  wrap(root, undefined);

  const untracked = new PgConfigurationError(
    `${seam.orm}: this transaction began before ddd-kit joined the ORM's transactions (or not through ` +
      'the instance it joined): its statements are refused. Open transactions through TransactionHost.',
  );
  const remove = addTransactionSource({
    current: () => {
      const tx = current();
      if (tx !== undefined && tx !== null && typeof tx === 'object')
        return transactions.get(tx) ?? { pool, client: { query: () => Promise.reject(untracked) } };
      // None current: refused when the one this code was started in ended; else suspended
      // (NOT_SUPPORTED, withoutTransaction): the parts autocommit.
      const started = scope.getStore();
      return started !== undefined && !started.active ? started : undefined;
    },
  });
  return {
    pool,
    detach: () => {
      remove();
      if (hadOwn) root.transaction = original;
      else delete (root as Partial<Tx>).transaction;
    },
  };
}

interface Tx {
  transaction(...args: unknown[]): Promise<unknown>;
}

/** A savepoint on the same transaction object: what waited for the commit in it is dropped when it throws. */
async function savepoint<R>(transaction: OrmTransaction, fn: () => Promise<R>): Promise<R> {
  const mark = transaction.callbacks.length;
  try {
    return await fn();
  } catch (error) {
    transaction.callbacks.length = Math.min(transaction.callbacks.length, mark);
    throw error;
  }
}

/** Runs what waited for a commit, one after another; a failing callback is logged and does not stop the others. */
async function runAfterCommit(callbacks: Array<() => unknown>): Promise<void> {
  for (const callback of callbacks) {
    try {
      await callback();
    } catch (error) {
      logger.error(
        'A callback waiting for a commit failed (the transaction is committed)',
        error instanceof Error ? error.stack : String(error),
      );
    }
  }
}
