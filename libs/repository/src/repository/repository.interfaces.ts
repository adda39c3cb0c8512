import type { AggregateClass, AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { OutboxStore } from '../outbox/outbox.interfaces.js';
import type { DataSyncPublisher } from '../data-sync/data-sync.interfaces.js';
import type { UniqueKeyReservations, UniqueKeyResolver } from '../unique-keys/unique-key.interfaces.js';

/** The write side's persistence contract for one aggregate type. */
export interface IRepository<ID extends AggregateId, T extends AggregateRoot<ID, any>> {
  /** Stores a new aggregate (version 1). An empty id is taken from the aggregate's ID generator. */
  insert(aggregate: T): Promise<void>;
  /** Stores a loaded aggregate where the stored version is still its `oldVersion`, else OptimisticLockError. */
  update(aggregate: T): Promise<void>;
  /** `insert` when `aggregate.isNew()`, else `update`. */
  save(aggregate: T): Promise<void>;
  /** The aggregate at its stored version, or `null` when there is none. */
  findById(id: ID): Promise<T | null>;
  /** Deletes the aggregate where the stored version is still its `oldVersion`, and publishes PURGE. */
  remove(aggregate: T): Promise<void>;
  existsById(id: ID): Promise<boolean>;
  /** The stored version, or -1 when there is no such aggregate (a signal, never an error). */
  currentVersion(id: ID): Promise<number>;
}

/** Where `insert` takes IDs from. `AggregateIdGeneratorRegistrar` of @ddd-kit/id-generator is one. */
export interface AggregateIdGeneratorSource {
  get(aggregate: AggregateClass | Function): { generate(): string };
}

/** What a repository needs beside its store; RepositoryModule fills it in for registered repositories. */
export interface RepositoryOptions<T extends AggregateRoot<any, any> = AggregateRoot<any, any>> {
  /** The aggregate class this repository stores: names its events and errors and picks its ID generator. */
  aggregate?: AggregateClass<T>;
  /** Receives the events of every successful write. Without one, events are collected and dropped. */
  publisher?: DataSyncPublisher;
  /**
   * Where the write stores its data-sync events, in the same atomic step as the aggregate (a
   * transactional outbox): the store of this repository's backend (InMemoryOutboxStore,
   * PostgresOutboxStore, …). With one, events are not published in process after the write;
   * OutboxRelay delivers them from the store, at least once. RepositoryModule sets it when
   * `forRoot({ outbox })` enables the outbox.
   */
  outbox?: OutboxStore;
  /** Fills empty IDs on insert; without one, insert of an aggregate without id fails with MissingIdGeneratorError. */
  idGenerators?: AggregateIdGeneratorSource | null;
  /**
   * The reservations of the aggregate's `@UniqueKey`s, by key name (PrepareKeys). RepositoryModule
   * takes them from PrepareKeyModule; pass them yourself to a repository built by hand.
   */
  uniqueKeys?: UniqueKeyResolver | Record<string, UniqueKeyReservations>;
}

/** One page of a repository's aggregates, in id order; `next` is absent on the last page. */
export interface AggregatePage<ID, T> {
  aggregates: Array<LoadedAggregate<T>>;
  next?: ID;
}

/** An aggregate as a store loaded it, with the version it found. */
export interface LoadedAggregate<T> {
  aggregate: T;
  version: number;
}
