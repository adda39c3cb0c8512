import type { ModuleMetadata, Type } from '@nestjs/common';
import type { AggregateClass } from '../aggregate/aggregate-root.js';
import type { MongooseBackendOptions } from '../backends/mongoose/mongoose.backend-options.js';
import type { PostgresBackendOptions } from '../backends/postgres/postgres.backend-options.js';
import type { RepositoryBackend } from '../backends/repository-backend.interface.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import type { RepositoryOutboxOptions } from '../outbox/outbox.options.js';

/**
 * RepositoryModule's options. The memory backend is always there; `uri` / `connection` add the
 * MongoDB backend (MongooseRepository), `postgres` the PostgreSQL one (PostgresRepository), and
 * `backends` your own.
 */
export interface RepositoryModuleOptions extends MongooseBackendOptions, PostgresBackendOptions {
  /**
   * Backends of your own (see RepositoryBackend), before the built-in ones: a repository is
   * configured by the first backend that owns it.
   */
  backends?: readonly RepositoryBackend[];
  /** Called when an `@OnDataSync` handler fails; the default logs the error. */
  onDataSyncError?: (error: unknown, events: readonly DataSyncEvent[], aggregate: AggregateClass) => void;
  /**
   * Durable data-sync events (a transactional outbox): `true` or an object turns it on. Each
   * write then stores its events atomically with the aggregate, in its backend's outbox store
   * (PostgreSQL: the outbox table, in the same statement; MongoDB: inside the document; memory:
   * beside the map) instead of publishing them in process, and OutboxRelay delivers them to the
   * `@OnDataSync` handlers at least once, in version order per aggregate. Off by default: writes
   * publish in process after they succeed.
   */
  outbox?: boolean | RepositoryOutboxOptions;
}

export interface RepositoryOptionsFactory {
  createRepositoryOptions(): RepositoryModuleOptions | Promise<RepositoryModuleOptions>;
}

export interface RepositoryModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: any[];
  useFactory?: (...args: any[]) => RepositoryModuleOptions | Promise<RepositoryModuleOptions>;
  useClass?: Type<RepositoryOptionsFactory>;
  useExisting?: Type<RepositoryOptionsFactory>;
}
