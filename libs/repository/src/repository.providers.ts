import { Logger, type FactoryProvider, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Connection } from 'mongoose';
import type { Pool } from 'pg';
import { AggregateRoot } from './aggregate/aggregate-root.js';
import { RepositoryConfigurationError } from './errors/repository-configuration.error.js';
import type {
  RepositoryFeature,
  RepositoryModuleOptions,
  RepositoryOutboxOptions,
  RepositoryPostgresOptions,
} from './interfaces/repository-module-options.interface.js';
import { MongooseRepository } from './backends/mongoose/mongoose.repository.js';
import { PostgresRepository } from './backends/postgres/postgres.repository.js';
import { AbstractRepository } from './repository/abstract-repository.js';
import { RepositoryBinder } from './repository.binder.js';
import {
  REPOSITORY_CONNECTION,
  REPOSITORY_MODULE_OPTIONS,
  REPOSITORY_OUTBOX_STORES,
  REPOSITORY_POSTGRES,
  REPOSITORY_POSTGRES_POOL,
} from './repository.constants.js';
import { quoteIdentifier, quoteTableName } from './backends/postgres/postgres-sql.utils.js';
import { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
import { InMemoryOutboxStore } from './backends/memory/in-memory-outbox.store.js';
import { MongoOutboxStore } from './backends/mongoose/mongo-outbox.store.js';
import { OutboxRelay, validateRelaySettings } from './outbox/outbox-relay.js';
import { PostgresOutboxStore } from './backends/postgres/postgres-outbox.store.js';
import { getRepositoryToken } from './repository.utils.js';

export interface RepositoryConnectionHandle {
  connection: Connection | null;
  /** True when the module opened the connection (from `uri`) and must close it. */
  owned: boolean;
}

export interface RepositoryPostgresHandle {
  pool: Pool | null;
  /** True when the module opened the pool (from `postgres.url`) and must end it. */
  owned: boolean;
  createTables: boolean;
}

/** Throws RepositoryConfigurationError, saying what to do, for options that cannot work. */
export function validateRepositoryModuleOptions(options: unknown): RepositoryModuleOptions {
  const fail = (what: string): never => {
    throw new RepositoryConfigurationError(`RepositoryModule options: ${what}`);
  };
  if (options === null || typeof options !== 'object')
    return fail('expected an object such as {} (in memory) or { uri }');
  const { uri, connection, onDataSyncError, connectionOptions } = options as RepositoryModuleOptions;
  if (uri !== undefined && connection !== undefined)
    fail('pass either uri (the module opens and closes a connection) or connection (yours), not both');
  if (uri !== undefined && (typeof uri !== 'string' || !/^mongodb(\+srv)?:\/\//.test(uri)))
    fail(`uri must be a mongodb:// or mongodb+srv:// URI, got ${JSON.stringify(uri)}`);
  if (connection !== undefined && (connection === null || typeof (connection as Connection).asPromise !== 'function')) {
    fail(
      "connection must be a Mongoose Connection (mongoose.createConnection(...), or @nestjs/mongoose's getConnectionToken())",
    );
  }
  if (connectionOptions !== undefined && (connectionOptions === null || typeof connectionOptions !== 'object'))
    fail('connectionOptions must be an object');
  if (uri === undefined && connectionOptions !== undefined) fail('connectionOptions needs uri');
  if (onDataSyncError !== undefined && typeof onDataSyncError !== 'function')
    fail('onDataSyncError must be a function');
  validatePostgresOptions((options as RepositoryModuleOptions).postgres, fail);
  validateOutboxOptions((options as RepositoryModuleOptions).outbox, fail);
  return options as RepositoryModuleOptions;
}

function validateOutboxOptions(outbox: RepositoryModuleOptions['outbox'], fail: (what: string) => never): void {
  if (outbox === undefined || typeof outbox === 'boolean') return;
  if (outbox === null || typeof outbox !== 'object') fail('outbox must be true, false or an object of outbox options');
  const { relay, table, notifyChannel } = outbox;
  if (relay !== undefined && typeof relay !== 'boolean') fail('outbox.relay must be a boolean');
  try {
    validateRelaySettings(outbox);
    if (table !== undefined) quoteTableName(table, 'outbox.table');
    if (notifyChannel !== undefined && notifyChannel !== false) quoteIdentifier(notifyChannel, 'outbox.notifyChannel');
  } catch (error) {
    fail((error as Error).message);
  }
}

/** The outbox options when the outbox is on, else undefined. */
export function outboxOptionsOf(options: RepositoryModuleOptions): RepositoryOutboxOptions | undefined {
  const outbox = options.outbox;
  if (outbox === undefined || outbox === false) return undefined;
  return outbox === true ? {} : outbox;
}

/**
 * The outbox stores, one per backend in use (PostgreSQL when the module has a pool, MongoDB
 * when it has a connection), or null when the outbox is off.
 */
export interface RepositoryOutboxStores {
  memory: InMemoryOutboxStore;
  postgres?: PostgresOutboxStore;
  /** Its collections are those of the MongooseRepositories the module configures (each adds its own). */
  mongo?: MongoOutboxStore;
}

export const outboxStoresProvider: FactoryProvider = {
  provide: REPOSITORY_OUTBOX_STORES,
  inject: [REPOSITORY_MODULE_OPTIONS, REPOSITORY_POSTGRES, REPOSITORY_CONNECTION],
  useFactory: async (
    options: RepositoryModuleOptions,
    postgres: RepositoryPostgresHandle,
    mongo: RepositoryConnectionHandle,
  ): Promise<RepositoryOutboxStores | null> => {
    const outbox = outboxOptionsOf(options);
    if (outbox === undefined) return null;
    const stores: RepositoryOutboxStores = { memory: new InMemoryOutboxStore() };
    if (postgres.pool !== null) {
      stores.postgres = new PostgresOutboxStore({
        pool: postgres.pool,
        table: outbox.table,
        createTable: postgres.createTables,
        notifyChannel: outbox.notifyChannel,
      });
    }
    if (mongo.connection !== null) {
      stores.mongo = new MongoOutboxStore();
      // No collection yet: this only turns indexing on, so each collection a repository adds
      // (when the binder configures it, before the relay starts) gets its indexes.
      await stores.mongo.ensureIndexes();
    }
    return stores;
  },
};

/** The relay over the module's outbox stores (null when the outbox is off); it starts on bootstrap unless `outbox.relay` is false. */
export const outboxRelayProvider: FactoryProvider = {
  provide: OutboxRelay,
  inject: [REPOSITORY_MODULE_OPTIONS, REPOSITORY_OUTBOX_STORES, DataSyncEventBus],
  useFactory: (
    options: RepositoryModuleOptions,
    stores: RepositoryOutboxStores | null,
    bus: DataSyncEventBus,
  ): OutboxRelay | null => {
    const outbox = outboxOptionsOf(options);
    if (outbox === undefined || stores === null) return null;
    const { relay, table: _table, notifyChannel: _channel, ...settings } = outbox;
    return new OutboxRelay({
      ...settings,
      stores: [stores.memory, stores.postgres, stores.mongo].filter((store) => store !== undefined),
      deliver: (aggregate, events) => bus.deliver(aggregate, events),
      autoStart: relay ?? true,
    });
  },
};

function validatePostgresOptions(postgres: RepositoryPostgresOptions | undefined, fail: (what: string) => never): void {
  if (postgres === undefined) return;
  if (postgres === null || typeof postgres !== 'object')
    fail('postgres must be an object: { url } (the module opens a pool) or { pool } (yours)');
  const { url, pool, poolOptions, createTables } = postgres;
  if (url === undefined && pool === undefined)
    fail('postgres needs url (the module opens and ends a pool) or pool (yours)');
  if (url !== undefined && pool !== undefined)
    fail('postgres: pass either url (the module opens and ends a pool) or pool (yours), not both');
  if (url !== undefined && (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url)))
    fail('postgres.url must be a postgres:// or postgresql:// URL');
  if (
    pool !== undefined &&
    (pool === null || typeof (pool as Pool).query !== 'function' || typeof (pool as Pool).connect !== 'function')
  ) {
    fail('postgres.pool must be a pg.Pool (new Pool({ connectionString }))');
  }
  if (poolOptions !== undefined && (poolOptions === null || typeof poolOptions !== 'object'))
    fail('postgres.poolOptions must be an object');
  if (url === undefined && poolOptions !== undefined) fail('postgres.poolOptions needs postgres.url');
  if (createTables !== undefined && typeof createTables !== 'boolean') fail('postgres.createTables must be a boolean');
}

export const connectionProvider: FactoryProvider = {
  provide: REPOSITORY_CONNECTION,
  inject: [REPOSITORY_MODULE_OPTIONS],
  useFactory: async (options: RepositoryModuleOptions): Promise<RepositoryConnectionHandle> => {
    if (options.connection !== undefined) return { connection: options.connection, owned: false };
    if (options.uri === undefined) return { connection: null, owned: false };
    // Loaded only here: users of the in-memory repositories need not install mongoose.
    const { default: mongoose } = await import('mongoose');
    const connection = mongoose.createConnection(options.uri, options.connectionOptions);
    try {
      await connection.asPromise();
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
    return { connection, owned: true };
  },
};

const postgresLogger = new Logger('RepositoryModule');

export const postgresProvider: FactoryProvider = {
  provide: REPOSITORY_POSTGRES,
  inject: [REPOSITORY_MODULE_OPTIONS],
  useFactory: async (options: RepositoryModuleOptions): Promise<RepositoryPostgresHandle> => {
    const postgres = options.postgres;
    if (postgres === undefined) return { pool: null, owned: false, createTables: true };
    const createTables = postgres.createTables ?? true;
    if (postgres.pool !== undefined) return { pool: postgres.pool, owned: false, createTables };
    // Loaded only here: users of the other repositories need not install pg.
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ ...postgres.poolOptions, connectionString: postgres.url });
    // An idle connection the server drops emits 'error' on the pool; unheard, it would end the
    // process. The pool replaces the connection; the next query reports a lasting outage.
    pool.on('error', (error) => postgresLogger.warn(`An idle PostgreSQL connection failed: ${error.message}`));
    try {
      // Fails the bootstrap on a wrong URL or an unreachable server, as the Mongo connection does.
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return { pool, owned: true, createTables };
  },
};

export const postgresPoolProvider: FactoryProvider = {
  provide: REPOSITORY_POSTGRES_POOL,
  inject: [REPOSITORY_POSTGRES],
  useFactory: (handle: RepositoryPostgresHandle) => handle.pool,
};

/** Checks forFeature entries where they are declared and turns the shorthand into features. */
export function normalizeFeatures(entries: ReadonlyArray<Function | RepositoryFeature>): RepositoryFeature[] {
  if (!Array.isArray(entries))
    throw new RepositoryConfigurationError(
      'RepositoryModule.forFeature expects an array of aggregate classes or { aggregate, repository? }',
    );
  return entries.map((entry, index) => {
    const feature = (typeof entry === 'function' ? { aggregate: entry } : entry) as RepositoryFeature;
    const at = `RepositoryModule.forFeature entry ${index}`;
    if (feature === null || typeof feature !== 'object')
      throw new RepositoryConfigurationError(
        `${at}: expected an aggregate class or { aggregate, repository? }, got ${String(entry)}`,
      );
    if (typeof feature.aggregate !== 'function' || !(feature.aggregate.prototype instanceof AggregateRoot)) {
      throw new RepositoryConfigurationError(
        `${at}: aggregate must be a class extending AggregateRoot, got ${String(feature.aggregate)} (a circular import?)`,
      );
    }
    if (
      feature.repository !== undefined &&
      (typeof feature.repository !== 'function' || !(feature.repository.prototype instanceof AbstractRepository))
    ) {
      throw new RepositoryConfigurationError(
        `${at} (${feature.aggregate.name}): repository must be a class extending MongooseRepository, InMemoryRepository or AbstractRepository (PostgresRepository is one)`,
      );
    }
    if (feature.collection !== undefined && !(feature.repository?.prototype instanceof MongooseRepository)) {
      throw new RepositoryConfigurationError(
        `${at} (${feature.aggregate.name}): collection needs a MongooseRepository class in repository`,
      );
    }
    if (feature.table !== undefined && !(feature.repository?.prototype instanceof PostgresRepository)) {
      throw new RepositoryConfigurationError(
        `${at} (${feature.aggregate.name}): table needs a PostgresRepository class in repository`,
      );
    }
    return feature;
  });
}

/** The providers of one forFeature entry: the repository token, and its class when it has one. */
export function createRepositoryProviders(feature: RepositoryFeature): Provider[] {
  const token = getRepositoryToken(feature.aggregate);
  const repositoryClass = feature.repository;
  // Optional, so that a missing forRoot is our error naming the step, not Nest's about an internal class.
  const binder = { token: RepositoryBinder, optional: true };
  if (repositoryClass === undefined) {
    return [
      {
        provide: token,
        inject: [binder],
        useFactory: (found?: RepositoryBinder) => binderOrFail(found, feature).inMemory(feature),
      },
    ];
  }
  return [
    {
      provide: repositoryClass,
      inject: [binder, ModuleRef],
      // ModuleRef.create builds the class with Nest's injection (its own dependencies work),
      // and the binder configures it before any other provider can receive it.
      useFactory: (found: RepositoryBinder | undefined, moduleRef: ModuleRef) =>
        binderOrFail(found, feature).provide(feature, () => moduleRef.create(repositoryClass)),
    },
    { provide: token, useExisting: repositoryClass },
  ];
}

function binderOrFail(binder: RepositoryBinder | undefined, feature: RepositoryFeature): RepositoryBinder {
  if (binder !== undefined) return binder;
  throw new RepositoryConfigurationError(
    `RepositoryModule.forFeature([${feature.aggregate.name}]) needs RepositoryModule.forRoot() (or forRootAsync) imported once, ` +
      `in the root module: forRoot() for in-memory repositories, forRoot({ uri }) for MongoDB, forRoot({ postgres: { url } }) for PostgreSQL.`,
  );
}
