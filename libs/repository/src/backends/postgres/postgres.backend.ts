import { Logger, type FactoryProvider } from '@nestjs/common';
import type { Pool } from 'pg';
import { RepositoryConfigurationError } from '../../errors/repository-configuration.error.js';
import type { RepositoryFeature } from '../../interfaces/repository-feature.interface.js';
import type { RepositoryOutboxOptions } from '../../outbox/outbox.options.js';
import { REPOSITORY_BACKENDS, REPOSITORY_POSTGRES_POOL } from '../../repository.constants.js';
import type { AnyRepository, RepositoryBackend, RepositoryBackendContext } from '../repository-backend.interface.js';
import type { RepositoryPostgresOptions } from './postgres.backend-options.js';
import { PostgresOutboxStore } from './postgres-outbox.store.js';
import { PostgresRepository } from './postgres.repository.js';

const logger = new Logger('RepositoryModule');

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

  async connect(): Promise<void> {
    if (this.current !== undefined) return;
    // Loaded only here: users of the other backends need not install pg.
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ ...this.options.poolOptions, connectionString: this.options.url });
    // An idle connection the server drops emits 'error' on the pool; unheard, it would end the
    // process. The pool replaces the connection; the next query reports a lasting outage.
    pool.on('error', (error) => logger.warn(`An idle PostgreSQL connection failed: ${error.message}`));
    try {
      // Fails the bootstrap on a wrong URL or an unreachable server, as the Mongo connection does.
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    this.current = pool;
    this.owned = true;
  }

  async close(): Promise<void> {
    if (this.owned) await this.current?.end();
  }

  owns(repository: AnyRepository): boolean {
    return repository instanceof PostgresRepository;
  }

  configure(repository: AnyRepository, feature: RepositoryFeature, context: RepositoryBackendContext): void {
    const postgres = repository as PostgresRepository<any, any>;
    if (context.outbox !== undefined && postgres.hasPool && !postgres.usesPool(this.current!)) {
      throw new RepositoryConfigurationError(
        `${context.name}: the outbox is on, and a PostgresRepository stores its events in the outbox table of the module's pool; ` +
          "this one has a pool of its own. Give it the module's pool (RepositoryModule.forRoot({ postgres: { pool } })).",
      );
    }
    postgres.configure({ pool: this.current, table: feature.table, createTable: this.createTables });
  }

  createOutboxStore(settings: RepositoryOutboxOptions): PostgresOutboxStore {
    return new PostgresOutboxStore({
      pool: this.current!,
      table: settings.table,
      createTable: this.createTables,
      notifyChannel: settings.notifyChannel,
    });
  }

  /** `SELECT 1` on the pool itself: a health check never joins (or waits for) an ambient transaction. */
  async ping(): Promise<void> {
    await this.current?.query('SELECT 1');
  }
}

/** The pool of the PostgreSQL backend (null without one), under getRepositoryPoolToken(). */
export const postgresPoolProvider: FactoryProvider = {
  provide: REPOSITORY_POSTGRES_POOL,
  inject: [REPOSITORY_BACKENDS],
  useFactory: (backends: readonly RepositoryBackend[]) =>
    backends.find((backend): backend is PostgresBackend => backend instanceof PostgresBackend)?.pool ?? null,
};
