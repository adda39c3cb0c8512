import type { FactoryProvider, Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Connection } from 'mongoose';
import { AggregateRoot } from './aggregate/aggregate-root.js';
import { RepositoryConfigurationError } from './errors/repository-configuration.error.js';
import type { RepositoryFeature, RepositoryModuleOptions } from './interfaces/repository-module-options.interface.js';
import { AbstractRepository } from './repository/abstract-repository.js';
import { RepositoryBinder } from './repository.binder.js';
import { REPOSITORY_CONNECTION, REPOSITORY_MODULE_OPTIONS } from './repository.constants.js';
import { getRepositoryToken } from './repository.utils.js';

export interface RepositoryConnectionHandle {
  connection: Connection | null;
  /** True when the module opened the connection (from `uri`) and must close it. */
  owned: boolean;
}

/** Throws RepositoryConfigurationError, saying what to do, for options that cannot work. */
export function validateRepositoryModuleOptions(options: unknown): RepositoryModuleOptions {
  const fail = (what: string): never => {
    throw new RepositoryConfigurationError(`RepositoryModule options: ${what}`);
  };
  if (options === null || typeof options !== 'object') return fail('expected an object such as {} (in memory) or { uri }');
  const { uri, connection, onDataSyncError, connectionOptions } = options as RepositoryModuleOptions;
  if (uri !== undefined && connection !== undefined) fail('pass either uri (the module opens and closes a connection) or connection (yours), not both');
  if (uri !== undefined && (typeof uri !== 'string' || !/^mongodb(\+srv)?:\/\//.test(uri))) fail(`uri must be a mongodb:// or mongodb+srv:// URI, got ${JSON.stringify(uri)}`);
  if (connection !== undefined && (connection === null || typeof (connection as Connection).asPromise !== 'function')) {
    fail('connection must be a Mongoose Connection (mongoose.createConnection(...), or @nestjs/mongoose\'s getConnectionToken())');
  }
  if (connectionOptions !== undefined && (connectionOptions === null || typeof connectionOptions !== 'object')) fail('connectionOptions must be an object');
  if (uri === undefined && connectionOptions !== undefined) fail('connectionOptions needs uri');
  if (onDataSyncError !== undefined && typeof onDataSyncError !== 'function') fail('onDataSyncError must be a function');
  return options as RepositoryModuleOptions;
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

/** Checks forFeature entries where they are declared and turns the shorthand into features. */
export function normalizeFeatures(entries: ReadonlyArray<Function | RepositoryFeature>): RepositoryFeature[] {
  if (!Array.isArray(entries)) throw new RepositoryConfigurationError('RepositoryModule.forFeature expects an array of aggregate classes or { aggregate, repository? }');
  return entries.map((entry, index) => {
    const feature = (typeof entry === 'function' ? { aggregate: entry } : entry) as RepositoryFeature;
    const at = `RepositoryModule.forFeature entry ${index}`;
    if (feature === null || typeof feature !== 'object') throw new RepositoryConfigurationError(`${at}: expected an aggregate class or { aggregate, repository? }, got ${String(entry)}`);
    if (typeof feature.aggregate !== 'function' || !(feature.aggregate.prototype instanceof AggregateRoot)) {
      throw new RepositoryConfigurationError(`${at}: aggregate must be a class extending AggregateRoot, got ${String(feature.aggregate)} (a circular import?)`);
    }
    if (feature.repository !== undefined && (typeof feature.repository !== 'function' || !(feature.repository.prototype instanceof AbstractRepository))) {
      throw new RepositoryConfigurationError(`${at} (${feature.aggregate.name}): repository must be a class extending MongooseRepository, InMemoryRepository or AbstractRepository`);
    }
    if (feature.collection !== undefined && feature.repository === undefined) {
      throw new RepositoryConfigurationError(`${at} (${feature.aggregate.name}): collection needs a MongooseRepository class in repository`);
    }
    return feature;
  });
}

/** The providers of one forFeature entry: the repository token, and its class when it has one. */
export function createRepositoryProviders(feature: RepositoryFeature): Provider[] {
  const token = getRepositoryToken(feature.aggregate);
  const repositoryClass = feature.repository;
  if (repositoryClass === undefined) {
    return [{ provide: token, inject: [RepositoryBinder], useFactory: (binder: RepositoryBinder) => binder.inMemory(feature) }];
  }
  return [
    {
      provide: repositoryClass,
      inject: [RepositoryBinder, ModuleRef],
      // ModuleRef.create builds the class with Nest's injection (its own dependencies work),
      // and the binder configures it before any other provider can receive it.
      useFactory: (binder: RepositoryBinder, moduleRef: ModuleRef) => binder.provide(feature, () => moduleRef.create(repositoryClass)),
    },
    { provide: token, useExisting: repositoryClass },
  ];
}
