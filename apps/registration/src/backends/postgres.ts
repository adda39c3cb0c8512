import { Logger } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { IdGeneratorModule, PostgresMachineIdDistributor } from '@ddd-kit/id-generator';
import { IdempotencyModule, PostgresIdempotencyStore } from '@ddd-kit/idempotency';
import { PostgresPrepareKeyFactory, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { RepositoryModule } from '@ddd-kit/repository';
import { TransactionalAdapterPg } from '@ddd-kit/transactional-adapter-pg';
import type { Pool } from 'pg';
import type { AppConfig } from '../config/app-config.js';
import { outboxOptions } from '../outbox/outbox-options.js';
import { PostgresUserReadModel } from '../read-model/postgres-user-read-model.js';
import { UserReadModel } from '../read-model/user-read-model.js';
import { User } from '../users/user.aggregate.js';
import { UsernamePrepareKey } from '../users/username.prepare-key.js';
import { UserPostgresRepository } from '../users/user.repository.js';
import {
  idempotencyOptions,
  MACHINE_ID_NAMESPACE,
  required,
  type Backend,
  type StoreConnection,
  type UsersBackend,
} from './backend.js';
import { boundedWaitPool, DEFAULT_CONNECTION_WAIT_MS, DEFAULT_POOL_MAX } from './postgres-pool.js';

// PostgreSQL: the username reservations, the users with their outbox and read model, the
// records of repeated requests, and machine IDs leased one per instance, all on one pool, so
// that a request commits in one transaction: the one `@Transactional()` starts from that pool
// (TransactionalAdapterPg), which every ddd-kit part on the pool joins.

export const POSTGRES_POOL = Symbol('POSTGRES_POOL');

export const postgresConnection: StoreConnection<Pool> = {
  token: POSTGRES_POOL,
  async open(config) {
    // Loaded only here: deployments without PostgreSQL need not have pg.
    const { default: pg } = await import('pg');
    // A request that finds every connection busy waits a bounded time, then is a 503 (never a hang).
    const pool = boundedWaitPool(pg.Pool, {
      connectionString: required(config.databaseUrl, 'DATABASE_URL'),
      max: config.postgresPoolMax ?? DEFAULT_POOL_MAX,
      connectionTimeoutMillis: config.postgresConnectionWaitMs ?? DEFAULT_CONNECTION_WAIT_MS,
      query_timeout: 10_000,
    });
    // An idle client losing its connection emits 'error'; the pool replaces it.
    pool.on('error', (error) => new Logger('Connections').warn(`PostgreSQL: ${error.message}`));
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return pool;
  },
  close: (pool) => pool.end(),
};

export const postgresReservations = (): Backend => ({
  connection: postgresConnection,
  module: PrepareKeyModule.forRootAsync({
    inject: [POSTGRES_POOL],
    // The pool the users live on too: reservations and users commit in one transaction.
    useFactory: (pool: Pool) => ({ factory: new PostgresPrepareKeyFactory(pool, { table: 'username_reservations' }) }),
  }),
});

export const postgresUsers = (config: AppConfig): UsersBackend => ({
  connection: postgresConnection,
  module: RepositoryModule.forRootAsync({
    // UsernamePrepareKey: built after the reservations (see UsersBackend).
    inject: [POSTGRES_POOL, UsernamePrepareKey],
    // The outbox table is written in the user's transaction; a commit wakes the relay (LISTEN/NOTIFY), polling is the fallback.
    useFactory: (pool: Pool) => ({ postgres: { pool }, outbox: outboxOptions(config, { pollIntervalMs: 1_000 }) }),
  }),
  repository: { aggregate: User, repository: UserPostgresRepository },
  providers: [
    {
      provide: UserReadModel,
      inject: [POSTGRES_POOL],
      useFactory: async (pool: Pool) => {
        const readModel = new PostgresUserReadModel(pool);
        await readModel.ensureTable();
        return readModel;
      },
    },
  ],
  // The reservations (on the same pool), the user row and its outbox row: one transaction a command.
  transactions: new TransactionalAdapterPg({ poolToken: POSTGRES_POOL }),
});

/**
 * The records of repeated requests, wherever the users are on PostgreSQL: the store opens the
 * request's transaction through the transaction host, so the service's `@Transactional()`
 * joins it and the record commits with the user row, the reservation and the outbox, or rolls
 * back with them — no window in between.
 */
export const postgresIdempotency = (config: AppConfig): Backend => ({
  connection: postgresConnection,
  module: IdempotencyModule.forRootAsync({
    inject: [POSTGRES_POOL, TransactionHost],
    useFactory: (pool: Pool, txHost: TransactionHost<TransactionalAdapterPg>) =>
      idempotencyOptions(
        config,
        new PostgresIdempotencyStore(pool, {
          table: 'idempotency_records',
          transaction: (fn) => txHost.withTransaction(fn),
        }),
      ),
  }),
});

/** MACHINE_ID=postgres. */
export const postgresMachineId = (): Backend => ({
  connection: postgresConnection,
  module: IdGeneratorModule.forRootAsync({
    inject: [POSTGRES_POOL],
    useFactory: (pool: Pool) => ({ namespace: MACHINE_ID_NAMESPACE, machine: new PostgresMachineIdDistributor(pool) }),
  }),
});
