import { isUnstorableId } from '../aggregate/aggregate-id.utils.js';
import { getAggregateName } from '../aggregate/aggregate-name.utils.js';
import { AggregateRoot, setStoredVersion, type AggregateClass } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { WriteEvents } from '../data-sync/write-events.js';
import type { OutboxStore } from '../outbox/outbox.interfaces.js';
import {
  AggregateStateError,
  DuplicateAggregateError,
  MissingIdGeneratorError,
  OptimisticLockError,
  RepositoryConfigurationError,
} from '../errors.js';
import {
  createUniqueKeyWriter,
  toUniqueKeyResolver,
  type UniqueKeyWriterStore,
  type UniqueKeyWriter,
  type WriteKind,
} from '../unique-keys/unique-key.writer.js';
import type { UniqueKeyReserver } from '../unique-keys/unique-key.reserver.js';
import type { UniqueKeyResolver } from '../unique-keys/unique-key.interfaces.js';
import { observeWrite } from '../telemetry/repository.telemetry.js';
import type {
  AggregateIdGeneratorSource,
  AggregatePage,
  IRepository,
  LoadedAggregate,
  RepositoryOptions,
  WriteOptions,
} from './repository.interfaces.js';
import { RepositoryWriteFlow } from './repository-write-flow.js';
import { assertWriteFlowIntact } from './write-preconditions.js';

/**
 * The fixed write flow. `insert`, `update` and `remove` always
 *   1. check the aggregate's state and id (filling an empty id on insert),
 *   2. fire `aggregate.triggerDataSyncHook()` and take the events it collected,
 *   3. call `doInsert` / `doUpdate` / `doRemove` — between the aggregate's unique-key
 *      reservations when it declares `@UniqueKey`s (UniqueKeyWriter),
 *   4. only when that succeeded: advance the aggregate's versions and, once the write is
 *      durable, release its old unique-key values and publish the events (WriteEvents).
 * A write that fails publishes nothing and leaves the aggregate's versions as they were; the
 * events it collected are discarded, and a retry collects them afresh from the aggregate's state
 * then, so nothing is ever published twice or for a write that did not happen.
 * The steps themselves are RepositoryWriteFlow's (repository-write-flow.ts); this class gives
 * them the backend's `doXxx` and the hooks below.
 *
 * Subclasses implement the `doXxx` steps and `doFindById`; they may not redefine the write
 * methods (construction throws RepositoryConfigurationError). To act around writes, extend the
 * aggregate's `triggerDataSyncHook` or subscribe to the published events.
 */
export abstract class AbstractRepository<
  ID extends AggregateId,
  T extends AggregateRoot<ID, any>,
> implements IRepository<ID, T> {
  // No initialisers on these fields: with useDefineForClassFields off an initialiser would run
  // after the base constructor and wipe what `configure` set from the constructor's options.
  private aggregateClass?: AggregateClass<T>;
  private writeEvents?: WriteEvents;
  private idGenerators?: AggregateIdGeneratorSource | null;
  private uniqueKeyResolver?: UniqueKeyResolver;
  /** Built on first need; null when the aggregate has no unique keys. */
  private keyWriter?: UniqueKeyWriter<ID, T> | null;
  /** The write flow over this repository's steps, made once (`#`: a name no subclass can clash with). */
  readonly #writes = new RepositoryWriteFlow<ID, T>({
    nameOf: (aggregate) => this.nameOf(aggregate),
    generateId: (aggregate, name) => this.generateId(aggregate, name),
    uniqueKeyWriter: () => this.uniqueKeyWriter(),
    store: (kind, aggregate, events) => {
      if (kind === 'update') return this.doUpdate(aggregate, events);
      return kind === 'insert' ? this.doInsert(aggregate, events) : this.doRemove(aggregate, events);
    },
    events: () => this.writeEvents!,
    aggregateType: (aggregate) => this.aggregateClass ?? (aggregate.constructor as AggregateClass<T>),
    whenWriteCommits: (publish) => this.whenWriteCommits(publish),
  });

  constructor(options: RepositoryOptions<T> = {}) {
    assertWriteFlowIntact(new.target, AbstractRepository.prototype);
    this.configure(options);
  }

  /**
   * Sets what `options` name and leaves the rest: the constructor calls it with its options, and
   * RepositoryModule (through the repository's backend) at bootstrap, before anyone can use the
   * repository. A subclass that takes options of its own overrides it and calls `super.configure`.
   * The aggregate, once set, cannot change; an outbox must be one this repository can write
   * (`acceptsOutbox`).
   */
  configure(options: RepositoryOptions<T>): void {
    if (options.aggregate !== undefined) {
      if (this.aggregateClass !== undefined && this.aggregateClass !== options.aggregate) {
        throw new RepositoryConfigurationError(
          `${this.constructor.name} already stores ${this.aggregateClass.name}; it cannot also store ${options.aggregate.name}. ` +
            'Use one repository class per aggregate.',
        );
      }
      this.aggregateClass = options.aggregate;
    }
    const events = (this.writeEvents ??= new WriteEvents());
    if (options.publisher !== undefined) events.setPublisher(options.publisher);
    if (options.outbox !== undefined && options.outbox !== events.outbox) {
      if (!this.acceptsOutbox(options.outbox)) {
        throw new RepositoryConfigurationError(
          `${this.constructor.name} cannot store data-sync events with its writes in ${options.outbox?.constructor?.name ?? String(options.outbox)}: ` +
            "an outbox is written by the repository of its own backend (the store that backend's createOutboxStore gives).",
        );
      }
      events.setOutbox(options.outbox);
    }
    if (options.idGenerators !== undefined) this.idGenerators = options.idGenerators;
    if (options.uniqueKeys !== undefined) {
      this.uniqueKeyResolver = toUniqueKeyResolver(options.uniqueKeys, this.constructor.name);
      this.keyWriter = undefined;
    }
  }

  /**
   * Throws RepositoryConfigurationError when the repository lacks what it needs or is declared
   * wrongly, so that RepositoryModule fails the bootstrap (it calls it once the repository is
   * configured). Nothing to check here; a backend's base class overrides it.
   */
  checkConfiguration(): void {}

  // ---------------------------------------------------------------- writes

  insert(aggregate: T): Promise<void> {
    return this.observe('insert', aggregate, this.#writes.insert);
  }

  /**
   * Writes the aggregate where the stored version is still its `oldVersion` — and
   * `options.expectedVersion`, when stated (see WriteOptions): one conditional write either way.
   */
  update(aggregate: T, options?: WriteOptions): Promise<void> {
    return this.observe(
      'update',
      aggregate,
      options === undefined ? this.#writes.update : (a) => this.#writes.update(a, options),
    );
  }

  async save(aggregate: T, options?: WriteOptions): Promise<void> {
    return aggregate.isNew() ? this.insert(aggregate) : this.update(aggregate, options);
  }

  /**
   * Marks the aggregate deleted, fires the hook (which collects PURGE) and deletes it where the
   * stored version is still its `oldVersion` (and `options.expectedVersion`, when stated). If the
   * delete fails, the mark set here is undone.
   */
  remove(aggregate: T, options?: WriteOptions): Promise<void> {
    return this.observe(
      'remove',
      aggregate,
      options === undefined ? this.#writes.remove : (a) => this.#writes.remove(a, options),
    );
  }

  // ---------------------------------------------------------------- reads

  // Not `async`: one step after the store's promise rather than a frame and an await (every load).
  findById(id: ID): Promise<T | null> {
    let found: Promise<LoadedAggregate<T> | null>;
    try {
      if (isUnstorableId(this.aggregateName(), id)) return Promise.resolve(null);
      found = this.doFindById(id);
    } catch (error) {
      return Promise.reject(error);
    }
    return found.then(this.#takeLoaded) as Promise<T | null>;
  }

  /**
   * What findById makes of the store's answer (one function for every load, made once). Typed
   * without T: a field mentioning T would make repositories of subclasses unassignable.
   */
  readonly #takeLoaded = (loaded: LoadedAggregate<AggregateRoot<any, any>> | null): AggregateRoot<any, any> | null => {
    if (loaded === null) return null;
    setStoredVersion(loaded.aggregate, loaded.version, this.aggregateName());
    this.uniqueKeyWriter()?.loaded(loaded.aggregate as T);
    return loaded.aggregate;
  };

  /**
   * Every stored aggregate, page by page in id order (reconciliation walks them). Aggregates
   * written or removed during the walk may or may not be seen. Needs `doListPage`.
   */
  async *aggregates(options: { pageSize?: number } = {}): AsyncIterableIterator<T> {
    const pageSize = options.pageSize ?? 500;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1)
      throw new RepositoryConfigurationError(`pageSize must be a positive integer, got ${String(pageSize)}`);
    const writer = this.uniqueKeyWriter();
    let cursor: ID | undefined;
    do {
      const page = await this.doListPage(cursor, pageSize);
      for (const { aggregate, version } of page.aggregates) {
        setStoredVersion(aggregate, version, this.aggregateName());
        writer?.loaded(aggregate);
        yield aggregate;
      }
      cursor = page.next;
    } while (cursor !== undefined);
  }

  /** The stored aggregates among `ids` by `String(id)`, in few round trips (reconciliation's pages). */
  async findByIds(ids: readonly ID[]): Promise<Map<string, T>> {
    const storable = ids.filter((id) => !isUnstorableId(this.aggregateName(), id));
    const found = (
      this.findById !== AbstractRepository.prototype.findById // hand-written: it decides what a load is
        ? await Promise.all(storable.map((id) => this.findById(id)))
        : (await this.doFindByIds(storable)).map(this.#takeLoaded)
    ) as Array<T | null>;
    return new Map(found.filter((a) => a !== null).map((aggregate): [string, T] => [String(aggregate.id), aggregate]));
  }

  async existsById(id: ID): Promise<boolean> {
    return (await this.currentVersion(id)) !== -1;
  }

  /** The stored version, or -1 when the aggregate does not exist (never thrown as an error). */
  async currentVersion(id: ID): Promise<number> {
    if (isUnstorableId(this.aggregateName(), id)) return -1;
    return this.doCurrentVersion(id);
  }

  // ---------------------------------------------------------------- for subclasses

  /**
   * Stores a new aggregate at `aggregate.newVersion`; throws DuplicateAggregateError when the id is taken.
   * `events` are what this write will publish once it succeeded (a store that keeps them with
   * the write, as an outbox does, writes them here); most stores ignore them.
   */
  protected abstract doInsert(aggregate: T, events: readonly DataSyncEvent[]): Promise<void>;
  /**
   * Stores the aggregate at `aggregate.newVersion` where the stored version is `aggregate.oldVersion`,
   * in one conditional write; when nothing matched, throws `this.conflict(aggregate)`.
   */
  protected abstract doUpdate(aggregate: T, events: readonly DataSyncEvent[]): Promise<void>;
  /** Deletes the aggregate where the stored version is `aggregate.oldVersion`; else throws `this.conflict(aggregate)`. */
  protected abstract doRemove(aggregate: T, events: readonly DataSyncEvent[]): Promise<void>;
  /**
   * The aggregate and the version stored with it, or null. The id has been validated.
   * A repository may instead override `findById` itself (setting `oldVersion` on what it
   * loads); then this is never called.
   */
  protected doFindById(_id: ID): Promise<LoadedAggregate<T> | null> {
    return Promise.reject(
      new RepositoryConfigurationError(
        `${this.constructor.name} must implement doFindById(id) (or override findById(id))`,
      ),
    );
  }

  /** doFindById of each id (their order need not be kept); a store that reads many in one round trip overrides it. */
  protected doFindByIds(ids: readonly ID[]): Promise<Array<LoadedAggregate<T> | null>> {
    return Promise.all(ids.map((id) => this.doFindById(id)));
  }

  /** One page of aggregates in id order, after `cursor` (undefined: from the first). Override to make `aggregates()` work. */
  protected doListPage(_cursor: ID | undefined, _pageSize: number): Promise<AggregatePage<ID, T>> {
    return Promise.reject(
      new RepositoryConfigurationError(
        `${this.constructor.name} cannot list its aggregates: implement doListPage(cursor, pageSize)`,
      ),
    );
  }

  /**
   * Runs one write with what must commit with it (reservations joining the same transaction).
   * Immediately by default; a store with transactions runs it in one (joining an ambient one).
   */
  protected inUnitOfWork<R>(work: () => Promise<R>): Promise<R> {
    return work();
  }

  /**
   * The object whose ambient transaction this repository's writes join (a pg Pool), if any:
   * reservations with the same `transactionScope` commit in the same transaction as the write.
   */
  protected get transactionScope(): object | undefined {
    return undefined;
  }

  /** The stored version or -1. Override when the store can read the version alone. */
  protected async doCurrentVersion(id: ID): Promise<number> {
    if (this.findById !== AbstractRepository.prototype.findById) {
      // A hand-written findById: the loaded aggregate's oldVersion is the stored version.
      const aggregate = await this.findById(id);
      return aggregate === null ? -1 : aggregate.oldVersion;
    }
    const loaded = await this.doFindById(id);
    return loaded === null ? -1 : loaded.version;
  }

  /**
   * Runs `publish` (the write's data-sync events) once the write is durable. Immediately by
   * default; a store whose writes can still be rolled back by an enclosing transaction defers
   * it to the commit, so a rollback publishes nothing.
   */
  protected whenWriteCommits(publish: () => Promise<void>): Promise<void> {
    return publish();
  }

  /**
   * The outbox this repository's writes store their events in (they are then not published in
   * process), or undefined: `doInsert`/`doUpdate`/`doRemove` must store `events` in it within
   * the same atomic write as the aggregate.
   */
  protected get outbox(): OutboxStore | undefined {
    return this.writeEvents?.outbox;
  }

  /** Whether this repository can store its events in `outbox` with its writes; none by default. */
  protected acceptsOutbox(_outbox: OutboxStore): boolean {
    return false;
  }

  /** The error a conditional write that matched nothing throws. */
  protected conflict(aggregate: T): OptimisticLockError {
    return new OptimisticLockError(this.nameOf(aggregate), aggregate.id, aggregate.oldVersion);
  }

  /** The error an insert of a taken id throws. */
  protected duplicate(aggregate: T, cause?: unknown): DuplicateAggregateError {
    return new DuplicateAggregateError(
      this.nameOf(aggregate),
      aggregate.id,
      cause === undefined ? undefined : { cause },
    );
  }

  /** The configured aggregate's name as events and errors show it ('Aggregate' when none is configured). */
  protected aggregateName(): string {
    return this.aggregateClass ? getAggregateName(this.aggregateClass) : 'Aggregate';
  }

  /** The configured aggregate class, if any. */
  protected get aggregateType(): AggregateClass<T> | undefined {
    return this.aggregateClass;
  }

  // ---------------------------------------------------------------- internals

  /** Runs one write inside its span (see observeWrite), named without throwing: a bad argument is the write's to report. */
  private observe(operation: WriteKind, aggregate: T, run: (aggregate: T) => Promise<void>): Promise<void> {
    const type = this.aggregateClass ?? (aggregate instanceof AggregateRoot ? aggregate.constructor : undefined);
    const name = type === undefined ? 'Aggregate' : getAggregateName(type);
    return observeWrite(operation, name, run, this.#writes, aggregate);
  }

  /**
   * The reserver of the aggregate's `@UniqueKey`s (their definitions, and the steps that reserve
   * and release their values), or null when it declares none: what `reconcileUniqueKeys` works with.
   */
  uniqueKeyReserver(): UniqueKeyReserver | null {
    return this.uniqueKeyWriter()?.reserver ?? null;
  }

  /** The writer that brackets each write with the aggregate's unique keys, built on first need; null when it has none. */
  private uniqueKeyWriter(): UniqueKeyWriter<ID, T> | null {
    if (this.keyWriter !== undefined) return this.keyWriter;
    const store: UniqueKeyWriterStore<ID> = {
      storedValues: async (id) => {
        const loaded = await this.doFindById(id);
        return loaded === null ? null : this.keyWriter!.reserver.valuesOf(loaded.aggregate);
      },
      currentVersion: (id) => this.doCurrentVersion(id),
      transactionScope: () => this.transactionScope,
      inUnitOfWork: (work) => this.inUnitOfWork(work),
    };
    this.keyWriter = createUniqueKeyWriter(
      this.aggregateClass,
      this.aggregateName(),
      this.constructor.name,
      this.uniqueKeyResolver,
      store,
    );
    return this.keyWriter;
  }

  private generateId(aggregate: T, name: string): string {
    if (!this.idGenerators) throw new MissingIdGeneratorError(name);
    return this.idGenerators.get(this.aggregateClass ?? aggregate.constructor).generate();
  }

  private nameOf(aggregate: T): string {
    if (!(aggregate instanceof AggregateRoot))
      throw new AggregateStateError(
        this.aggregateName(),
        undefined,
        'a repository stores AggregateRoot instances only',
      );
    return getAggregateName(this.aggregateClass ?? aggregate.constructor);
  }
}
