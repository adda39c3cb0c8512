import type { ModuleMetadata, Type } from '@nestjs/common';
import type { AggregateClass, AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AbstractRepository } from '../repository/abstract-repository.js';

/**
 * One aggregate's repository for RepositoryModule.forFeature: a class extending a backend's
 * repository base class (MongooseRepository, PostgresRepository, InMemoryRepository, yours) or
 * AbstractRepository itself, constructed by Nest (so it may inject what it needs); or — without
 * `repository` — a ready-made repository of the first backend that offers one (the memory
 * backend's InMemoryRepository unless one of `backends` offers its own). Passing the aggregate
 * class alone is short for `{ aggregate }`.
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
