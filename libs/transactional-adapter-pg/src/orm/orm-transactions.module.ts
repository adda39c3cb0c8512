import { createRequire } from 'node:module';
import { Module, type DynamicModule, type InjectionToken, type OnApplicationShutdown } from '@nestjs/common';
import type { getTransactionHostToken, TransactionHost } from '@nestjs-cls/transactional';
import { joinOrmTransactions, PgArgumentError, type OrmTransactionSeam, type PgPool } from '@ddd-kit/core/postgres';

export interface OrmTransactionsOptions {
  /** The ORM whose transactions ddd-kit joins: `typeOrm` or `drizzleOrm` (from this entry). */
  orm: OrmTransactionSeam;
  /** The `connectionName` of the ClsPluginTransactional whose adapter is the ORM's (default: the unnamed one). */
  connectionName?: string;
}

/** The token of the ORM's pg.Pool: give it to every ddd-kit PostgreSQL part (`postgres: { pool }`, …). */
export function getOrmPoolToken(connectionName?: string): string {
  return connectionName === undefined ? 'DDD_KIT_ORM_POOL' : `DDD_KIT_ORM_POOL:${connectionName}`;
}

/** Joined at start-up, and no longer once the application shuts down. */
class Joined implements OnApplicationShutdown {
  readonly pool: PgPool;
  private readonly detach: () => void;

  constructor(orm: OrmTransactionSeam, host: TransactionHost<any>) {
    // Outside any transaction (start-up), `tx` is the adapter's non-transactional instance.
    const joined = joinOrmTransactions(orm, host.tx as object, () =>
      host.isTransactionActive() ? (host.tx as unknown) : undefined,
    );
    this.pool = joined.pool;
    this.detach = joined.detach;
  }

  onApplicationShutdown(): void {
    this.detach();
  }
}

/**
 * Makes the ORM's transactions ddd-kit's: while `@Transactional()` (or `TransactionHost`) runs
 * one through `@nestjs-cls/transactional`'s adapter for that ORM, every ddd-kit PostgreSQL part
 * on the ORM's pool (`getOrmPoolToken()`) sends its statements in it.
 *
 *   OrmTransactionsModule.forRoot({ orm: typeOrm })
 */
@Module({})
export class OrmTransactionsModule {
  static forRoot(options: OrmTransactionsOptions): DynamicModule {
    const orm = (options as Partial<OrmTransactionsOptions> | null)?.orm;
    if (orm == null || typeof orm.poolOf !== 'function' || typeof orm.connectionOf !== 'function')
      throw new PgArgumentError('OrmTransactionsModule.forRoot needs { orm: typeOrm } or { orm: drizzleOrm }');
    const { connectionName } = options;
    const joined = Symbol(`ddd-kit ${orm.orm} transactions`);
    const pool = getOrmPoolToken(connectionName);
    return {
      module: OrmTransactionsModule,
      global: true,
      providers: [
        {
          provide: joined,
          inject: [transactionHostToken(connectionName)],
          useFactory: (host: TransactionHost<any>) => new Joined(orm, host),
        },
        { provide: pool, inject: [joined], useFactory: (j: Joined) => j.pool },
      ],
      exports: [pool],
    };
  }
}

/**
 * nestjs-cls's token of the TransactionHost, required when forRoot runs rather than imported:
 * importing this entry must not load nestjs-cls (see TransactionalAdapterPg's clsService).
 */
function transactionHostToken(connectionName: string | undefined): InjectionToken {
  const cls = createRequire(import.meta.url)('@nestjs-cls/transactional') as {
    getTransactionHostToken: typeof getTransactionHostToken;
  };
  return cls.getTransactionHostToken(connectionName);
}
