import type { FactoryProvider } from '@nestjs/common';
import { checkPool, companionPool, openPool, usePreparedStatements, type PgPool } from '@ddd-kit/core/postgres';
import type { Pool } from 'pg';
import { RepositoryConfigurationError } from '../../errors.js';
import type { RepositoryFeature } from '../../interfaces/repository-feature.interface.js';
import type { OutboxStore } from '../../outbox/outbox.interfaces.js';
import type { RepositoryOutboxOptions } from '../../outbox/outbox.options.js';
import { REPOSITORY_BACKENDS, REPOSITORY_POSTGRES_POOL } from '../../repository.constants.js';
import type { AnyRepository, RepositoryBackend, RepositoryBackendContext } from '../repository-backend.interface.js';
import type { RepositoryPostgresOptions } from './postgres.backend-options.js';
import { PostgresOutboxStore } from './postgres-outbox.store.js';
import { PostgresRepository } from './postgres.repository.js';

const OWNER = 'RepositoryModule (postgres)';

/**
 * PostgreSQL through node-postgres, from RepositoryModule's `postgres`: `{ url }` (a pool the
 * module opens, checks at bootstrap and ends at shutdown) or `{ pool }` (yours, left open). It
 * gives every PostgresRepository the pool, forFeature's `table` and `createTables`; with the
 * outbox on, a PostgresOutboxStore on the same pool (events commit with the row).
 */
export class PostgresBackend implements RepositoryBackend {
  readonly name = 'postgresql';
  private current: Pool | undefined;
  private owned = false;
  /** The readiness checks' own connection (ping, the outbox's status), made from the pool's settings. */
  private probe: (PgPool & { end?(): Promise<void> }) | undefined;

  constructor(private readonly options: RepositoryPostgresOptions) {
    this.current = options.pool;
  }

  /** The pool the repositories run on (once connected). */
  get pool(): Pool | undefined {
    return this.current;
  }

  private get createTables(): boolean {
    return this.options.createTables ?? true;
  }

  /**
   * Opens the pool from `url` (pg is loaded only then), or checks the given one: either way an
   * unreachable server fails the bootstrap with an error naming RepositoryModule and what to do.
   */
  async connect(): Promise<void> {
    if (this.current === undefined) {
      const pool = await openPool(
        // A request that cannot get a connection fails after this long instead of waiting for ever.
        { url: this.options.url!, poolOptions: { connectionTimeoutMillis: 10_000, ...this.options.poolOptions } },
        OWNER,
      );
      this.current = pool as unknown as Pool;
      this.owned = true;
    } else {
      await checkPool(this.current as unknown as PgPool, OWNER);
    }
    // Every ddd-kit part on this pool follows it (reservations, machine IDs, idempotency too).
    if (this.options.preparedStatements !== undefined)
      usePreparedStatements(this.current, this.options.preparedStatements);
  }

  async close(): Promise<void> {
    const probe = this.probe;
    this.probe = undefined;
    if (probe !== undefined && (probe as unknown) !== this.current) await probe.end?.().catch(() => undefined);
    if (this.owned) await this.current?.end();
  }

  owns(repository: AnyRepository): boolean {
    return repository instanceof PostgresRepository;
  }

  /** Configures the repository and makes (or checks) its table now, before the application takes a request. */
  async configure(
    repository: AnyRepository,
    feature: RepositoryFeature,
    context: RepositoryBackendContext,
  ): Promise<void> {
    const postgres = repository as PostgresRepository<any, any>;
    if (context.outbox !== undefined && postgres.hasPool && !postgres.usesPool(this.current!)) {
      throw new RepositoryConfigurationError(
        `${context.name}: the outbox is on, and a PostgresRepository stores its events in the outbox table of the module's pool; ` +
          "this one has a pool of its own. Give it the module's pool (RepositoryModule.forRoot({ postgres: { pool } })).",
      );
    }
    postgres.configure({ pool: this.current, table: feature.table, createTables: this.createTables });
    await postgres.ensureSchema();
  }

  async createOutboxStore(settings: RepositoryOutboxOptions): Promise<OutboxStore> {
    if (settings.postgresStore !== undefined) {
      const own = settings.postgresStore(this.current!) as OutboxStore & { ensureSetup?(): Promise<void> };
      await own.ensureSetup?.();
      return own;
    }
    const store = new PostgresOutboxStore({
      pool: this.current!,
      table: settings.table,
      createTables: this.createTables,
      notifyChannel: settings.notifyChannel,
      statusPool: this.probePool(),
    });
    await store.ensureTable();
    return store;
  }

  /**
   * `SELECT 1` on a connection of its own, outside the pool the requests use: a health check never
   * joins (or waits for) an ambient transaction, and a pool whose every connection is held by
   * requests waiting on another store (a silent Redis) is busy, not down. A PostgreSQL that does
   * not answer still fails it.
   */
  async ping(): Promise<void> {
    if (this.current === undefined) return;
    await this.probePool().query('SELECT 1');
  }

  /** One connection at most, opened when first needed (its idle connection lets the process exit). */
  private probePool(): Pool {
    this.probe ??= companionPool(this.current as unknown as PgPool, { max: 1 });
    return this.probe as unknown as Pool;
  }
}

/** The pool of the PostgreSQL backend (null without one), under getRepositoryPoolToken(). */
export const postgresPoolProvider: FactoryProvider = {
  provide: REPOSITORY_POSTGRES_POOL,
  inject: [REPOSITORY_BACKENDS],
  useFactory: (backends: readonly RepositoryBackend[]) =>
    backends.find((backend): backend is PostgresBackend => backend instanceof PostgresBackend)?.pool ?? null,
};
