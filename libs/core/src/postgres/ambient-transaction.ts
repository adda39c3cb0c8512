import { AsyncLocalStorage } from 'node:async_hooks';
import { processWide } from '../process-wide.js';
import { describePool } from './describe-pool.js';
import { isServerError } from './pool.js';
import type { PgPool, PgPoolClient, PgQueryable } from './pg.interfaces.js';
import { PgForeignTransactionError, PgTransactionEndedError } from '../errors.js';

/**
 * The transaction a use case runs in, as every ddd-kit PostgreSQL part reads it: one
 * AsyncLocalStorage per process (see processWide), so a repository, a PrepareKey factory and an
 * outbox find the transaction `@Transactional()` or `runInTransaction` started without being
 * handed anything.
 */
export interface AmbientPgTransaction {
  /** The pool the transaction was started from: the key a part matches its own pool against. */
  readonly pool: object;
  /** Where statements go: the transaction's connection; the pool while it is suspended; a refusal once it ended. */
  readonly client: PgQueryable;
  /** The enclosing transaction, if any (on another pool, or suspended by REQUIRES_NEW on this one). */
  readonly outer?: AmbientPgTransaction;
  /** Runs `callback` once the transaction committed (never when it rolls back). */
  readonly afterCommit?: (callback: () => unknown) => void;
  /** False once ended or while suspended (absent: active). */
  readonly active?: boolean;
  /**
   * True for a transaction a part opened for its own statements (a repository's write with its
   * reservations on the same pool): it is no use case, so a part on another pool called inside
   * it (reservations kept in another database) is not "inside another pool's transaction".
   */
  readonly local?: boolean;
}

export const ambientStorage = processWide(
  'pg-ambient-transaction',
  () => new AsyncLocalStorage<AmbientPgTransaction>(),
);

/**
 * A transaction opened by another library (an ORM, through its nestjs-cls adapter), read where
 * the ambient chain is read: `current()` says which one the calling code runs in, if any.
 */
export interface AmbientTransactionSource {
  current(): AmbientPgTransaction | undefined;
}

const sources = processWide('pg-ambient-sources', () => new Set<AmbientTransactionSource>());
// Under outsideTransaction: the sources' transactions it was entered in, hidden like the chain's
// (one started inside, an event handler's own, is not).
const detached = processWide('pg-outside-transaction', () => new AsyncLocalStorage<ReadonlySet<object>>());

/** Makes `source`'s transactions ambient ones (after ddd-kit's own: those are inner); returns its removal. */
export function addTransactionSource(source: AmbientTransactionSource): () => void {
  sources.add(source);
  return () => void sources.delete(source);
}

export const ENDED: PgQueryable = { query: () => Promise.reject(new PgTransactionEndedError()) };

/**
 * One transaction on one connection, as the transaction path publishes it. Every consumer gets
 * `guarded`, the connection behind a proxy that refuses statements once the transaction ended
 * (so late work never reaches a connection back in the pool) and notes a statement that failed
 * without the server answering (the connection is then not reused: see runTransaction).
 */
export class PgTransactionContext implements AmbientPgTransaction {
  /** The connection, refusing statements after the end of the transaction. */
  readonly guarded: PgPoolClient;
  /** True once a statement failed without an answer from the server (lost connection, timeout). */
  broken = false;
  /** Set by the nestjs-cls adapter: true while the CLS context says "no transaction here". */
  suspended?: () => boolean;
  private ended = false;
  private savepoints = 0;
  private readonly callbacks: Array<() => unknown> = [];

  constructor(
    readonly pool: PgPool,
    readonly connection: PgPoolClient,
    readonly outer: AmbientPgTransaction | undefined,
    readonly local = false,
  ) {
    this.guarded = new Proxy(connection, {
      get: (target, property, receiver) => {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return (...args: unknown[]) => this.query(target, args);
      },
    });
  }

  get client(): PgQueryable {
    if (this.ended) return ENDED;
    if (this.suspended?.()) return this.pool;
    return this.guarded;
  }

  get active(): boolean {
    return !this.ended && !this.suspended?.();
  }

  get hasEnded(): boolean {
    return this.ended;
  }

  readonly afterCommit = (callback: () => unknown): void => {
    if (this.ended) throw new PgTransactionEndedError();
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
   * dropped) when it throws, while the transaction goes on. Savepoints of one transaction must
   * not run concurrently: statements on one connection interleave.
   */
  async withSavepoint<R>(fn: () => Promise<R>): Promise<R> {
    const name = `ddd_kit_savepoint_${++this.savepoints}`;
    await this.guarded.query(`SAVEPOINT ${name}`);
    const mark = this.callbacks.length;
    let result: R;
    try {
      result = await fn();
    } catch (error) {
      this.callbacks.length = Math.min(this.callbacks.length, mark);
      // If this fails too, the connection is gone and the whole transaction fails with it.
      await this.guarded.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    }
    await this.guarded.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  }

  private query(target: PgPoolClient, args: unknown[]): unknown {
    const callback = typeof args[args.length - 1] === 'function' ? (args[args.length - 1] as (e: Error) => void) : null;
    if (this.ended) {
      const error = new PgTransactionEndedError();
      if (callback === null) return Promise.reject(error);
      process.nextTick(callback, error);
      return undefined;
    }
    const result = (target.query as (...a: unknown[]) => unknown).apply(target, args);
    if (result instanceof Promise) {
      // Observes the outcome only; the caller gets `result` itself, rejection included.
      result.then(undefined, (error: unknown) => {
        if (!isServerError(error)) this.broken = true;
      });
    }
    return result;
  }
}

/** Whether `t` takes statements now (a transaction of another implementation counts as active). */
function isActive(t: AmbientPgTransaction): boolean {
  return t.active ?? true;
}

/** The innermost transaction of the ambient chain started from `pool`, whatever its state. */
function ambientOn(pool: object): AmbientPgTransaction | undefined {
  for (const t of ambientTransactions()) if (t.pool === pool) return t;
  return undefined;
}

/** The innermost transaction started from `pool` that takes statements now, if any. */
export function activeTransactionFor(pool: object): AmbientPgTransaction | undefined {
  const t = ambientOn(pool);
  return t !== undefined && isActive(t) ? t : undefined;
}

const NO_OPTIONS: QueryableOptions = {};

export interface QueryableOptions {
  /**
   * Inside a transaction started from another pool (and none from this one): `'refuse'`
   * (default) throws PgForeignTransactionError naming both pools; `'autocommit'` runs on this
   * pool, committing on its own.
   */
  foreignTransaction?: 'refuse' | 'autocommit';
}

/**
 * Where a part's statement runs: the client of the ambient transaction started from `pool`
 * (a refusal once that transaction ended), else `pool` itself (autocommit). `part` names the
 * caller in the error thrown when the call runs inside another pool's transaction only.
 */
export function queryableFor(
  pool: PgQueryable & object,
  part: string,
  options: QueryableOptions = NO_OPTIONS,
): PgQueryable {
  const own = ambientOn(pool);
  if (own !== undefined) return own.client;
  if (options.foreignTransaction !== 'autocommit') {
    const foreign = innermostActive();
    if (foreign !== undefined) throw foreignTransaction(part, pool, foreign.pool);
  }
  return pool;
}

/** The error of a part on `pool` running inside a transaction of `other`. */
export function foreignTransaction(part: string, pool: object, other: object): PgForeignTransactionError {
  return new PgForeignTransactionError(
    `${part} runs on ${describePool(pool)}, inside a transaction started from ${describePool(other)}: its statements ` +
      'would commit on their own, outside that transaction. Give both the same pg.Pool (for RepositoryModule: ' +
      "TransactionalAdapterPg({ poolToken: getRepositoryPoolToken() })), or set the part's option to autocommit there.",
  );
}

function innermostActive(): AmbientPgTransaction | undefined {
  for (const t of ambientTransactions()) if (isActive(t) && !t.local) return t;
  return undefined;
}

/**
 * The ambient transactions, innermost first: ddd-kit's own (published by runTransaction alone),
 * then those of the added sources. The nestjs-cls adapter finds in it the transaction of a `tx`
 * it handed out.
 */
export function* ambientTransactions(): Generator<AmbientPgTransaction, void, undefined> {
  for (let t = ambientStorage.getStore(); t !== undefined; t = t.outer) yield t;
  if (sources.size === 0) return;
  const hidden = detached.getStore();
  for (const source of sources) {
    const t = source.current();
    if (t !== undefined && hidden?.has(t) !== true) yield t;
  }
}

function sourceTransactions(): Set<object> {
  const seen = new Set<object>(detached.getStore());
  for (const source of sources) {
    const t = source.current();
    if (t !== undefined) seen.add(t);
  }
  return seen;
}

/** Runs `fn` with no ambient transaction (housekeeping, health checks, DDL: never part of a use case). */
export function outsideTransaction<R>(fn: () => R): R {
  if (sources.size === 0) return ambientStorage.exit(fn);
  return detached.run(sourceTransactions(), () => ambientStorage.exit(fn));
}
