import { createRequire } from 'node:module';
import type { InjectionToken } from '@nestjs/common';
import type { TransactionalAdapter, TransactionalAdapterOptions } from '@nestjs-cls/transactional';
import type { ClsService, ClsServiceManager } from 'nestjs-cls';
import type { Pool, PoolClient } from 'pg';
import {
  ambientTransactions,
  assertPool,
  beginStatement,
  PgTransactionContext,
  runTransaction,
  type PgTransactionOptions,
} from '@ddd-kit/core/postgres';

/** What `TransactionHost#tx` is: the transaction's client inside one, the pool outside. */
export type PgTransactionClient = PoolClient | Pool;

export interface TransactionalAdapterPgOptions {
  /** The pg.Pool transactions are started from (the one your repositories use)… */
  pool?: Pool;
  /** …or the injection token of that pool (`getRepositoryPoolToken()` of @ddd-kit/repository, or your own). */
  poolToken?: InjectionToken;
  /** Options of every transaction that does not say otherwise. */
  defaultTxOptions?: Partial<PgTransactionOptions>;
}

/**
 * The node-postgres adapter of `@nestjs-cls/transactional`:
 *
 *   ClsModule.forRoot({
 *     global: true,
 *     plugins: [new ClsPluginTransactional({ adapter: new TransactionalAdapterPg({ poolToken: PG_POOL }) })],
 *   })
 *
 * `@Transactional()` / `TransactionHost#withTransaction` run the method in BEGIN … COMMIT on
 * one connection of the pool (ROLLBACK when it throws); `txHost.tx` is that connection, or the
 * pool outside a transaction. Each transaction is also published as the ambient one of the
 * ddd-kit protocol, so PostgresRepository and the other ddd-kit PostgreSQL parts on the same
 * pool join it without being handed anything.
 *
 * Propagation is nestjs-cls's: REQUIRED joins, REQUIRES_NEW takes another connection,
 * NESTED runs in a SAVEPOINT, NOT_SUPPORTED (and the other ways of running without a
 * transaction) leave the ddd-kit parts autocommitting too until the method returns.
 */
export class TransactionalAdapterPg implements TransactionalAdapter<Pool, PgTransactionClient, PgTransactionOptions> {
  connectionToken?: InjectionToken;
  connection?: Pool;
  defaultTxOptions?: Partial<PgTransactionOptions>;

  constructor(options: TransactionalAdapterPgOptions) {
    if (options === null || typeof options !== 'object')
      throw new TypeError('TransactionalAdapterPg needs { pool } or { poolToken }');
    const { pool, poolToken, defaultTxOptions } = options;
    if ((pool === undefined) === (poolToken === undefined)) {
      throw new TypeError(
        'TransactionalAdapterPg needs exactly one of { pool } (a pg.Pool) and { poolToken } (its injection token)',
      );
    }
    if (pool !== undefined) assertPool(pool, 'TransactionalAdapterPg');
    if (defaultTxOptions !== undefined) beginStatement(defaultTxOptions);
    this.connection = pool;
    this.connectionToken = poolToken;
    this.defaultTxOptions = defaultTxOptions;
  }

  optionsFactory = (pool: Pool): TransactionalAdapterOptions<PgTransactionClient, PgTransactionOptions> => {
    assertPool(pool, `TransactionalAdapterPg (the provider of ${String(this.connectionToken)})`);
    return {
      wrapWithTransaction: (options, fn, setTx) =>
        runTransaction(
          pool,
          options,
          (context) => {
            // `tx` is the guarded connection: a call left running after the method returned is
            // refused instead of reaching a connection the pool has handed to someone else.
            setTx(context.guarded as PoolClient);
            context.suspended = suspendedWhenClsDropsIt(context.guarded as PoolClient);
            return fn();
          },
          // Whatever runs after the commit sees no transaction, through txHost.tx as through the protocol.
          { beforeAfterCommit: () => setTx(undefined) },
        ),
      wrapWithNestedTransaction: (_options, fn, setTx, tx) => {
        const context = contextOf(pool, tx);
        if (context === undefined) return this.optionsFactory(pool).wrapWithTransaction(_options, fn, setTx);
        setTx(context.guarded as PoolClient);
        return context.withSavepoint(fn);
      },
      getFallbackInstance: () => pool,
    };
  };
}

/** The published transaction whose (guarded) connection is `tx`. */
function contextOf(pool: Pool, tx: unknown): PgTransactionContext | undefined {
  for (const t of ambientTransactions()) {
    if (t instanceof PgTransactionContext && t.pool === pool && t.guarded === tx) return t;
  }
  return undefined;
}

/**
 * nestjs-cls runs NOT_SUPPORTED, NEVER and withoutTransaction() by clearing the transaction
 * from a copy of the CLS context, without calling the adapter. The ambient transaction follows
 * the CLS context: it counts as suspended wherever the key that held this client no longer does.
 */
function suspendedWhenClsDropsIt(client: PoolClient): (() => boolean) | undefined {
  const cls = clsService();
  if (!cls.isActive()) return undefined;
  const store = cls.get() as Record<PropertyKey, unknown>;
  const key = Reflect.ownKeys(store).find((k) => store[k] === client);
  if (key === undefined) return undefined;
  // Outside any CLS context (cls.exit()) nothing says the transaction was dropped: it stays joined.
  return () => cls.isActive() && (cls.get() as Record<PropertyKey, unknown>)[key] !== client;
}

let clsManager: typeof ClsServiceManager | undefined;

/**
 * nestjs-cls's ClsService, required when the first transaction starts (nestjs-cls is loaded by
 * then) rather than imported: importing this package for runInTransaction alone must not load
 * nestjs-cls, a CommonJS package that requires the ES-module-only Nest 12 (which some module
 * loaders, Jest's on Node 20 among them, cannot do).
 */
function clsService(): ClsService {
  clsManager ??= (createRequire(import.meta.url)('nestjs-cls') as { ClsServiceManager: typeof ClsServiceManager })
    .ClsServiceManager;
  return clsManager.getClsService();
}
