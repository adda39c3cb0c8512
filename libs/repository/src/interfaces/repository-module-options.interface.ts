import type { ModuleMetadata, Type } from '@nestjs/common';
import type { Connection, ConnectOptions } from 'mongoose';
import type { Pool, PoolConfig } from 'pg';
import type { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateClass } from '../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import type { OutboxRelaySettings } from '../outbox/outbox-relay.js';
import type { AbstractRepository } from '../repository/abstract-repository.js';

export interface RepositoryModuleOptions {
  /**
   * A MongoDB URI: the module opens a Mongoose connection for MongooseRepository subclasses
   * and closes it on shutdown.
   */
  uri?: string;
  /** Options for the connection opened from `uri`. */
  connectionOptions?: ConnectOptions;
  /**
   * Or an open Mongoose connection (from @nestjs/mongoose, say: inject `getConnectionToken()`
   * in forRootAsync). The module uses it and leaves closing it to its owner.
   */
  connection?: Connection;
  /** PostgreSQL for PostgresRepository subclasses: a URL (the module's own pool) or your pool. */
  postgres?: RepositoryPostgresOptions;
  /** Called when an `@OnDataSync` handler fails; the default logs the error. */
  onDataSyncError?: (error: unknown, events: readonly DataSyncEvent[], aggregate: AggregateClass) => void;
  /**
   * Durable data-sync events (a transactional outbox): `true` or an object turns it on. Each
   * write then stores its events atomically with the aggregate (PostgreSQL: the outbox table,
   * in the same statement; memory: beside the map) instead of publishing them in process, and
   * OutboxRelay delivers them to the `@OnDataSync` handlers at least once, in version order per
   * aggregate. Off by default: writes publish in process after they succeed, as before.
   */
  outbox?: boolean | RepositoryOutboxOptions;
}

export interface RepositoryOutboxOptions extends OutboxRelaySettings {
  /** Run the relay in this application (default true); false: writes store events, another process relays them. */
  relay?: boolean;
  /** PostgreSQL: the outbox table, `name` or `schema.name` (default `ddd_kit_outbox`), created on first use unless `postgres.createTables` is false. */
  table?: string;
  /** PostgreSQL: the LISTEN/NOTIFY channel (default `ddd_kit_outbox`); false: relays poll only. */
  notifyChannel?: string | false;
}

export interface RepositoryPostgresOptions {
  /**
   * A `postgres://` URL: the module opens a pg.Pool, checks that it connects at bootstrap and
   * ends it on shutdown.
   */
  url?: string;
  /** Options for the pool opened from `url` (`max`, `idleTimeoutMillis`, `ssl`, …). */
  poolOptions?: Omit<PoolConfig, 'connectionString'>;
  /**
   * Or your pg.Pool: the module uses it and leaves ending it to you. Use the same pool for
   * `TransactionalAdapterPg`: repositories join transactions started from their own pool.
   */
  pool?: Pool;
  /** Whether repositories create their table on first use when it is missing (default true). */
  createTables?: boolean;
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

/**
 * One aggregate's repository for RepositoryModule.forFeature: a class extending
 * MongooseRepository, PostgresRepository, InMemoryRepository or AbstractRepository (constructed by Nest, so it
 * may inject what it needs), or — without `repository` — a ready-made InMemoryRepository.
 * Passing the aggregate class alone is short for `{ aggregate }`.
 */
export interface RepositoryFeature<T extends AggregateRoot<any, any> = AggregateRoot<any, any>> {
  aggregate: AggregateClass<T>;
  repository?: Type<AbstractRepository<any, T>>;
  /** MongooseRepository only: the collection (default: the aggregate's name). */
  collection?: string;
  /** PostgresRepository only: the table (`name` or `schema.name`), instead of the class's `table`. */
  table?: string;
}

export interface RepositoryFeatureOptions {
  /** Modules providing what the registered repository classes inject (beyond global modules). */
  imports?: ModuleMetadata['imports'];
}
