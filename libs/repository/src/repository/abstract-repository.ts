import { Logger } from '@nestjs/common';
import { assertAggregateId, isEmptyId } from '../aggregate/aggregate-id.utils.js';
import { getAggregateName } from '../aggregate/aggregate-name.utils.js';
import {
  AggregateRoot,
  collectWriteEvents,
  setDeleted,
  setStoredKeys,
  setStoredVersion,
  storedKeysOf,
} from '../aggregate/aggregate-root.js';
import type { AggregateClass, AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import type { DataSyncPublisher } from '../data-sync/data-sync.interfaces.js';
import type { OutboxStore } from '../outbox/outbox.interfaces.js';
import { AggregateStateError } from '../errors/aggregate-state.error.js';
import { DuplicateAggregateError } from '../errors/duplicate-aggregate.error.js';
import { InvalidAggregateIdError } from '../errors/invalid-aggregate-id.error.js';
import { MissingIdGeneratorError } from '../errors/missing-id-generator.error.js';
import { OptimisticLockError } from '../errors/optimistic-lock.error.js';
import { RepositoryConfigurationError } from '../errors/repository-configuration.error.js';
import { UniqueKeyViolationError } from '../errors/unique-key-violation.error.js';
import { getUniqueKeys } from '../unique-keys/unique-key.decorator.js';
import { UniqueKeyKeeper, type KeyValues, type TakenKey } from '../unique-keys/unique-key.keeper.js';
import type { UniqueKeyResolver } from '../unique-keys/unique-key.interfaces.js';
import { UNIQUE_KEYS, type UniqueKeysAccess } from '../unique-keys/reconcile-unique-keys.js';
import { failedWrite, ok, repositoryTelemetry, writes } from '../telemetry/repository.telemetry.js';
import type {
  AggregateIdGeneratorSource,
  AggregatePage,
  IRepository,
  LoadedAggregate,
  RepositoryOptions,
} from './repository.interfaces.js';

/** The key RepositoryModule configures a repository through (not part of the public surface). */
export const CONFIGURE_REPOSITORY = Symbol('ddd-kit.configure-repository');

// The write flow lives in these methods; a subclass that redefined one could skip the hook
// and leave read models behind without anyone noticing, so that is refused at construction.
const FIXED_METHODS = ['insert', 'update', 'remove', 'save'] as const;

const logger = new Logger('Repository');

/**
 * The fixed write flow. `insert`, `update` and `remove` always
 *   1. check the aggregate's state and id (filling an empty id on insert),
 *   2. fire `aggregate.triggerDataSyncHook()` and take the events it collected,
 *   3. call `doInsert` / `doUpdate` / `doRemove`,
 *   4. only when that succeeded: advance the aggregate's versions and publish the events.
 * A write that fails publishes nothing and leaves the aggregate's versions as they were; the
 * events it collected are discarded, and a retry collects them afresh from the aggregate's state
 * then, so nothing is ever published twice or for a write that did not happen.
 *
 * An aggregate with `@UniqueKey`s has them kept around step 3 (see UniqueKeyKeeper): each new
 * or changed value reserved before the write, each old value released once the write is
 * durable — inside the same transaction when the reservations and the repository share one
 * (`transactionScope`), after it otherwise. A failed write releases what it reserved only when
 * the write is known not to have happened: a definite failure (a conflict, a duplicate), or an
 * ambiguous one (a lost reply) that the stored version shows did not happen.
 *
 * Subclasses implement the `doXxx` steps and `doFindById`; they may not redefine the write
 * methods (construction throws RepositoryConfigurationError). To act around writes, extend the
 * aggregate's `triggerDataSyncHook` or subscribe to the published events.
 */
export abstract class AbstractRepository<
  ID extends AggregateId,
  T extends AggregateRoot<ID, any>,
> implements IRepository<ID, T> {
  private aggregateClass?: AggregateClass<T>;
  private publisher?: DataSyncPublisher;
  private outboxStore?: OutboxStore;
  private idGenerators?: AggregateIdGeneratorSource | null;
  private uniqueKeyResolver?: UniqueKeyResolver;
  /** Built on first need; null when the aggregate has no unique keys. */
  private uniqueKeyKeeper?: UniqueKeyKeeper | null;

  constructor(options: RepositoryOptions<T> = {}) {
    assertWriteFlowIntact(new.target);
    this[CONFIGURE_REPOSITORY](options);
  }

  /** Sets what the options name and leaves the rest; RepositoryModule calls it at bootstrap. */
  [CONFIGURE_REPOSITORY](options: RepositoryOptions<T>): void {
    if (options.aggregate !== undefined) {
      if (this.aggregateClass !== undefined && this.aggregateClass !== options.aggregate) {
        throw new RepositoryConfigurationError(
          `${this.constructor.name} already stores ${this.aggregateClass.name}; it cannot also store ${options.aggregate.name}. ` +
            'Use one repository class per aggregate.',
        );
      }
      this.aggregateClass = options.aggregate;
    }
    if (options.publisher !== undefined) this.publisher = options.publisher;
    if (options.outbox !== undefined && options.outbox !== this.outboxStore) {
      if (!this.acceptsOutbox(options.outbox)) {
        throw new RepositoryConfigurationError(
          `${this.constructor.name} cannot store data-sync events with its writes in ${options.outbox?.constructor?.name ?? String(options.outbox)}: ` +
            'an outbox is written by the repository of its own backend (InMemoryOutboxStore by InMemoryRepository, PostgresOutboxStore by PostgresRepository, MongoOutboxStore by MongooseRepository).',
        );
      }
      this.outboxStore = options.outbox;
    }
    if (options.idGenerators !== undefined) this.idGenerators = options.idGenerators;
    if (options.uniqueKeys !== undefined) {
      const given = options.uniqueKeys;
      this.uniqueKeyResolver =
        typeof given === 'function'
          ? given
          : (name) => {
              const reservations = given[name];
              if (reservations === undefined)
                throw new RepositoryConfigurationError(
                  `${this.constructor.name}: no reservations given for unique key '${name}' (options.uniqueKeys)`,
                );
              return reservations;
            };
      this.uniqueKeyKeeper = undefined;
    }
  }

  // ---------------------------------------------------------------- writes

  insert(aggregate: T): Promise<void> {
    return this.observe('repository.insert', 'insert', aggregate, () => this.insertNow(aggregate));
  }

  update(aggregate: T): Promise<void> {
    return this.observe('repository.update', 'update', aggregate, () => this.updateNow(aggregate));
  }

  async save(aggregate: T): Promise<void> {
    return aggregate.isNew() ? this.insert(aggregate) : this.update(aggregate);
  }

  /**
   * Marks the aggregate deleted, fires the hook (which collects PURGE) and deletes it where the
   * stored version is still its `oldVersion`. If the delete fails, the mark set here is undone.
   */
  remove(aggregate: T): Promise<void> {
    return this.observe('repository.remove', 'remove', aggregate, () => this.removeNow(aggregate));
  }

  private async insertNow(aggregate: T): Promise<void> {
    const name = this.nameOf(aggregate);
    if (!aggregate.isNew()) {
      throw new AggregateStateError(
        name,
        aggregate.id,
        `insert creates aggregates; this one is stored at version ${aggregate.oldVersion} (use update or save)`,
      );
    }
    if (aggregate.isDeleted())
      throw new AggregateStateError(name, aggregate.id, 'it is marked deleted; a deleted aggregate is not inserted');
    if (isEmptyId(aggregate.id)) aggregate.id = this.generateId(aggregate, name) as ID;
    assertAggregateId(name, aggregate.id);
    await this.write('insert', aggregate, (events) => this.doInsert(aggregate, events));
  }

  private async updateNow(aggregate: T): Promise<void> {
    const name = this.nameOf(aggregate);
    assertAggregateId(name, aggregate.id);
    if (aggregate.isNew())
      throw new AggregateStateError(
        name,
        aggregate.id,
        'update needs a stored aggregate; this one is new (use insert or save)',
      );
    if (aggregate.isDeleted()) throw new AggregateStateError(name, aggregate.id, 'it is marked deleted; use remove');
    await this.write('update', aggregate, (events) => this.doUpdate(aggregate, events));
  }

  private async removeNow(aggregate: T): Promise<void> {
    const name = this.nameOf(aggregate);
    assertAggregateId(name, aggregate.id);
    if (aggregate.isNew())
      throw new AggregateStateError(name, aggregate.id, 'remove needs a stored aggregate; this one was never inserted');
    const wasDeleted = aggregate.isDeleted();
    aggregate.markDeleted();
    try {
      await this.write('remove', aggregate, (events) => this.doRemove(aggregate, events));
    } catch (error) {
      if (!wasDeleted) setDeleted(aggregate, false);
      throw error;
    }
  }

  // ---------------------------------------------------------------- reads

  async findById(id: ID): Promise<T | null> {
    assertAggregateId(this.aggregateName(), id);
    const loaded = await this.doFindById(id);
    if (loaded === null) return null;
    setStoredVersion(loaded.aggregate, loaded.version, this.aggregateName());
    const keeper = this.keeper();
    if (keeper !== null) setStoredKeys(loaded.aggregate, keeper.valuesOf(loaded.aggregate));
    return loaded.aggregate;
  }

  /**
   * Every stored aggregate, page by page in id order (reconciliation walks them). Aggregates
   * written or removed during the walk may or may not be seen. Needs `doListPage`.
   */
  async *aggregates(options: { pageSize?: number } = {}): AsyncIterableIterator<T> {
    const pageSize = options.pageSize ?? 500;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1)
      throw new RepositoryConfigurationError(`pageSize must be a positive integer, got ${String(pageSize)}`);
    const keeper = this.keeper();
    let cursor: ID | undefined;
    do {
      const page = await this.doListPage(cursor, pageSize);
      for (const { aggregate, version } of page.aggregates) {
        setStoredVersion(aggregate, version, this.aggregateName());
        if (keeper !== null) setStoredKeys(aggregate, keeper.valuesOf(aggregate));
        yield aggregate;
      }
      cursor = page.next;
    } while (cursor !== undefined);
  }

  async existsById(id: ID): Promise<boolean> {
    return (await this.currentVersion(id)) !== -1;
  }

  /** The stored version, or -1 when the aggregate does not exist (never thrown as an error). */
  async currentVersion(id: ID): Promise<number> {
    assertAggregateId(this.aggregateName(), id);
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
    return this.outboxStore;
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

  /** Runs one write inside its span and counts it by outcome (just runs it when nothing records). */
  private observe(spanName: string, operation: string, aggregate: T, run: () => Promise<void>): Promise<void> {
    // Named without throwing: a bad argument is reported by the write itself.
    const name = this.aggregateClass
      ? getAggregateName(this.aggregateClass)
      : aggregate instanceof AggregateRoot
        ? getAggregateName(aggregate.constructor)
        : 'Aggregate';
    const telemetry = repositoryTelemetry.begin(spanName, writes, operation, name);
    return telemetry === undefined ? run() : telemetry.settle(telemetry.within(run), ok, failedWrite);
  }

  private async write(
    kind: 'insert' | 'update' | 'remove',
    aggregate: T,
    store: (events: readonly DataSyncEvent[]) => Promise<void>,
  ): Promise<void> {
    const events = collectWriteEvents(aggregate, this.nameOf(aggregate));
    const written = aggregate.newVersion;
    const keeper = this.keeper();
    if (keeper === null) {
      await store(events);
      setStoredVersion(aggregate, written);
      if (this.publisher !== undefined && events.length > 0 && this.outboxStore === undefined)
        await this.whenWriteCommits(() => this.publish(aggregate, events));
      return;
    }

    const stored =
      kind === 'insert'
        ? undefined
        : (storedKeysOf(aggregate) ?? (await this.readStoredKeys(keeper, aggregate.id)) ?? undefined);
    const plan = keeper.plan(kind, kind === 'remove' ? new Map() : keeper.valuesOf(aggregate), stored);
    const scope = this.transactionScope;
    const joins = (name: string) => scope !== undefined && keeper.storeOf(name).transactionScope === scope;
    const taken: TakenKey[] = [];
    try {
      await this.inUnitOfWork(async () => {
        await keeper.take(plan.take, keeper.owner(aggregate.id), taken);
        await store(events);
        // Old values whose reservations share the write's transaction go with it.
        await keeper.release(
          plan.release.filter((ref) => joins(ref.name)),
          aggregate.id,
          true,
        );
      });
    } catch (error) {
      await this.afterFailedWrite(kind, keeper, aggregate, error, taken, stored, plan.release);
      throw error;
    }
    setStoredVersion(aggregate, written);
    setStoredKeys(aggregate, kind === 'remove' ? undefined : plan.after);
    // The other old values go once the write is durable: in an enclosing transaction, after it commits.
    const others = plan.release.filter((ref) => !joins(ref.name));
    await this.whenWriteCommits(async () => {
      await keeper.release(others, aggregate.id, false);
      if (this.publisher !== undefined && events.length > 0 && this.outboxStore === undefined)
        await this.publish(aggregate, events);
    });
  }

  /**
   * After a failed write, releases the values it had reserved — only those the write is known
   * not to need: it definitely failed (a conflict, a duplicate, a taken key), or it failed
   * ambiguously (a lost reply, a timeout) and the stored version shows it did not happen. A
   * reservation whose value the stored aggregate holds stays. When nothing can be known (the
   * store is unreachable), everything stays: both values held is the recoverable state.
   */
  private async afterFailedWrite(
    kind: 'insert' | 'update' | 'remove',
    keeper: UniqueKeyKeeper,
    aggregate: T,
    error: unknown,
    taken: TakenKey[],
    stored: KeyValues | undefined,
    released: ReadonlyArray<{ name: string; key: string }>,
  ): Promise<void> {
    if (isDefiniteFailure(error)) {
      if (taken.length === 0) return;
      // A retry may find the aggregate stored with these values: they stay.
      const now = await this.readStoredKeys(keeper, aggregate.id).catch(() => 'unknown' as const);
      if (now !== 'unknown') await keeper.releaseTaken(taken, now ?? undefined);
      return;
    }
    let version: number;
    try {
      version = await this.doCurrentVersion(aggregate.id);
    } catch {
      return; // the store cannot say: leave every reservation to reconciliation
    }
    if (kind === 'insert' && version === -1) await keeper.releaseTaken(taken, undefined);
    else if (kind === 'update' && version === aggregate.oldVersion) await keeper.releaseTaken(taken, stored);
    else if (kind === 'remove' && version === -1) await keeper.release(released, aggregate.id, false); // it is gone
  }

  /** The unique-key values stored for `id`, or null when it is not stored. */
  private async readStoredKeys(keeper: UniqueKeyKeeper, id: ID): Promise<KeyValues | null> {
    const loaded = await this.doFindById(id);
    return loaded === null ? null : keeper.valuesOf(loaded.aggregate);
  }

  /** What reconcileUniqueKeys needs of this repository. */
  [UNIQUE_KEYS](): UniqueKeysAccess<ID, T> {
    return {
      keeper: () => this.keeper(),
      aggregates: (options) => this.aggregates(options),
      findById: (id) => this.findById(id),
    };
  }

  /** The keeper of the aggregate's unique keys, or null when it has none. */
  protected keeper(): UniqueKeyKeeper | null {
    if (this.uniqueKeyKeeper !== undefined) return this.uniqueKeyKeeper;
    const definitions = this.aggregateClass ? getUniqueKeys(this.aggregateClass) : [];
    if (definitions.length === 0) return (this.uniqueKeyKeeper = null);
    const resolve = this.uniqueKeyResolver;
    if (resolve === undefined) {
      throw new RepositoryConfigurationError(
        `${this.aggregateClass!.name} declares @UniqueKey(${definitions.map((d) => `'${d.name}'`).join(', ')}) but ${this.constructor.name} ` +
          'has no reservations for them: import PrepareKeyModule.forRoot({ factory }) beside RepositoryModule (which takes them from it), ' +
          'or pass { uniqueKeys: { name: prepareKey } } to the repository.',
      );
    }
    this.uniqueKeyKeeper = new UniqueKeyKeeper(this.aggregateName(), definitions, resolve);
    return this.uniqueKeyKeeper;
  }

  private async publish(aggregate: T, events: DataSyncEvent[]): Promise<void> {
    if (this.publisher === undefined || events.length === 0) return;
    try {
      await this.publisher.publish(this.aggregateClass ?? (aggregate.constructor as AggregateClass<T>), events);
    } catch (error) {
      // The write is stored: failing the call now would invite the caller to repeat a write
      // that happened. Read models that missed these events are repaired by reconciliation.
      logger.error(
        `Publishing ${events.length} data-sync event(s) of ${this.nameOf(aggregate)} ${JSON.stringify(aggregate.id)} failed`,
        error instanceof Error ? error.stack : String(error),
      );
    }
  }

  private generateId(aggregate: T, name: string): string {
    if (!this.idGenerators) throw new MissingIdGeneratorError(name);
    return this.idGenerators.get(this.aggregateClass ?? aggregate.constructor).generate();
  }

  private nameOf(aggregate: T): string {
    if (!(aggregate instanceof AggregateRoot)) {
      throw new AggregateStateError(
        this.aggregateName(),
        undefined,
        'a repository stores AggregateRoot instances only',
      );
    }
    return getAggregateName(this.aggregateClass ?? aggregate.constructor);
  }
}

function assertWriteFlowIntact(target: Function): void {
  for (
    let proto = target.prototype;
    proto && proto !== AbstractRepository.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const method of FIXED_METHODS) {
      if (Object.prototype.hasOwnProperty.call(proto, method)) {
        throw new RepositoryConfigurationError(
          `${proto.constructor.name} redefines ${method}(): the write methods fire the data-sync hook before every write ` +
            "and may not be replaced. Implement doInsert/doUpdate/doRemove instead, extend the aggregate's " +
            'triggerDataSyncHook, or handle the published events (@OnDataSync).',
        );
      }
    }
  }
}

/** Errors that say the write did not happen. */
function isDefiniteFailure(error: unknown): boolean {
  return (
    error instanceof UniqueKeyViolationError ||
    error instanceof OptimisticLockError ||
    error instanceof DuplicateAggregateError ||
    error instanceof AggregateStateError ||
    error instanceof InvalidAggregateIdError ||
    error instanceof RepositoryConfigurationError ||
    error instanceof MissingIdGeneratorError
  );
}
