import type { AggregateClass, AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { OutboxStore } from '../outbox/outbox.interfaces.js';
import type { DataSyncPublisher } from '../data-sync/data-sync.interfaces.js';
import type { UniqueKeyReservations, UniqueKeyResolver } from '../unique-keys/unique-key.interfaces.js';

/** The write side's persistence contract for one aggregate type. */
export interface IRepository<ID extends AggregateId, T extends AggregateRoot<ID, any>> {
  /** Stores a new aggregate (version 1). An empty id is taken from the aggregate's ID generator. */
  insert(aggregate: T): Promise<void>;
  /**
   * Stores a loaded aggregate where the stored version is still its `oldVersion`, else
   * OptimisticLockError. With `expectedVersion` (a client's `If-Match`), only where it is still
   * at that version: one conditional write, the same error (see WriteOptions).
   */
  update(aggregate: T, options?: WriteOptions): Promise<void>;
  /** `insert` when `aggregate.isNew()`, else `update` (with `options`). */
  save(aggregate: T, options?: WriteOptions): Promise<void>;
  /** The aggregate at its stored version, or `null` when there is none. */
  findById(id: ID): Promise<T | null>;
  /**
   * Deletes the aggregate where the stored version is still its `oldVersion` (and `expectedVersion`,
   * when given), and publishes PURGE; else OptimisticLockError.
   */
  remove(aggregate: T, options?: WriteOptions): Promise<void>;
  existsById(id: ID): Promise<boolean>;
  /** The stored version, or -1 when there is no such aggregate (a signal, never an error). */
  currentVersion(id: ID): Promise<number>;
}

/** What `update`, `save` and `remove` of a stored aggregate may state. */
export interface WriteOptions {
  /**
   * The version the caller expects the aggregate to be stored at — the version a client last
   * read, as it sends it back in `If-Match`. The write happens only where the stored version is
   * this one, in the store's one conditional write (`WHERE version = expectedVersion`); anything
   * else is the OptimisticLockError of any lost race, and nothing is written, reserved, released
   * or published. An aggregate loaded at another version than the expected one can never be
   * written with it: it is refused with that error before the store is asked (the store holds
   * neither, or a state the aggregate was not derived from). A whole number, 0 or more.
   */
  expectedVersion?: number;
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
