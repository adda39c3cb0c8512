import { Logger } from '@nestjs/common';
import { assertAggregateId, isEmptyId } from '../aggregate/aggregate-id.utils.js';
import { getAggregateName } from '../aggregate/aggregate-name.utils.js';
import { AggregateRoot, collectWriteEvents, setDeleted, setStoredVersion } from '../aggregate/aggregate-root.js';
import type { AggregateClass, AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import type { DataSyncPublisher } from '../data-sync/data-sync.interfaces.js';
import { AggregateStateError } from '../errors/aggregate-state.error.js';
import { DuplicateAggregateError } from '../errors/duplicate-aggregate.error.js';
import { MissingIdGeneratorError } from '../errors/missing-id-generator.error.js';
import { OptimisticLockError } from '../errors/optimistic-lock.error.js';
import { RepositoryConfigurationError } from '../errors/repository-configuration.error.js';
import type { AggregateIdGeneratorSource, IRepository, LoadedAggregate, RepositoryOptions } from './repository.interfaces.js';

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
 * Subclasses implement the `doXxx` steps and `doFindById`; they may not redefine the write
 * methods (construction throws RepositoryConfigurationError). To act around writes, extend the
 * aggregate's `triggerDataSyncHook` or subscribe to the published events.
 */
export abstract class AbstractRepository<ID extends AggregateId, T extends AggregateRoot<ID, any>> implements IRepository<ID, T> {
  private aggregateClass?: AggregateClass<T>;
  private publisher?: DataSyncPublisher;
  private idGenerators?: AggregateIdGeneratorSource | null;

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
    if (options.idGenerators !== undefined) this.idGenerators = options.idGenerators;
  }

  // ---------------------------------------------------------------- writes

  async insert(aggregate: T): Promise<void> {
    const name = this.nameOf(aggregate);
    if (!aggregate.isNew()) {
      throw new AggregateStateError(name, aggregate.id, `insert creates aggregates; this one is stored at version ${aggregate.oldVersion} (use update or save)`);
    }
    if (aggregate.isDeleted()) throw new AggregateStateError(name, aggregate.id, 'it is marked deleted; a deleted aggregate is not inserted');
    if (isEmptyId(aggregate.id)) aggregate.id = this.generateId(aggregate, name) as ID;
    assertAggregateId(name, aggregate.id);
    await this.write(aggregate, (events) => this.doInsert(aggregate, events));
  }

  async update(aggregate: T): Promise<void> {
    const name = this.nameOf(aggregate);
    assertAggregateId(name, aggregate.id);
    if (aggregate.isNew()) throw new AggregateStateError(name, aggregate.id, 'update needs a stored aggregate; this one is new (use insert or save)');
    if (aggregate.isDeleted()) throw new AggregateStateError(name, aggregate.id, 'it is marked deleted; use remove');
    await this.write(aggregate, (events) => this.doUpdate(aggregate, events));
  }

  async save(aggregate: T): Promise<void> {
    return aggregate.isNew() ? this.insert(aggregate) : this.update(aggregate);
  }

  /**
   * Marks the aggregate deleted, fires the hook (which collects PURGE) and deletes it where the
   * stored version is still its `oldVersion`. If the delete fails, the mark set here is undone.
   */
  async remove(aggregate: T): Promise<void> {
    const name = this.nameOf(aggregate);
    assertAggregateId(name, aggregate.id);
    if (aggregate.isNew()) throw new AggregateStateError(name, aggregate.id, 'remove needs a stored aggregate; this one was never inserted');
    const wasDeleted = aggregate.isDeleted();
    aggregate.markDeleted();
    try {
      await this.write(aggregate, (events) => this.doRemove(aggregate, events));
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
    return loaded.aggregate;
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
      new RepositoryConfigurationError(`${this.constructor.name} must implement doFindById(id) (or override findById(id))`),
    );
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

  /** The error a conditional write that matched nothing throws. */
  protected conflict(aggregate: T): OptimisticLockError {
    return new OptimisticLockError(this.nameOf(aggregate), aggregate.id, aggregate.oldVersion);
  }

  /** The error an insert of a taken id throws. */
  protected duplicate(aggregate: T, cause?: unknown): DuplicateAggregateError {
    return new DuplicateAggregateError(this.nameOf(aggregate), aggregate.id, cause === undefined ? undefined : { cause });
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

  private async write(aggregate: T, store: (events: readonly DataSyncEvent[]) => Promise<void>): Promise<void> {
    const events = collectWriteEvents(aggregate, this.nameOf(aggregate));
    const written = aggregate.newVersion;
    await store(events);
    setStoredVersion(aggregate, written);
    if (this.publisher !== undefined && events.length > 0) await this.whenWriteCommits(() => this.publish(aggregate, events));
  }

  private async publish(aggregate: T, events: DataSyncEvent[]): Promise<void> {
    if (this.publisher === undefined || events.length === 0) return;
    try {
      await this.publisher.publish(this.aggregateClass ?? (aggregate.constructor as AggregateClass<T>), events);
    } catch (error) {
      // The write is stored: failing the call now would invite the caller to repeat a write
      // that happened. Read models that missed these events are repaired by reconciliation.
      logger.error(`Publishing ${events.length} data-sync event(s) of ${this.nameOf(aggregate)} ${JSON.stringify(aggregate.id)} failed`, error instanceof Error ? error.stack : String(error));
    }
  }

  private generateId(aggregate: T, name: string): string {
    if (!this.idGenerators) throw new MissingIdGeneratorError(name);
    return this.idGenerators.get(this.aggregateClass ?? aggregate.constructor).generate();
  }

  private nameOf(aggregate: T): string {
    if (!(aggregate instanceof AggregateRoot)) {
      throw new AggregateStateError(this.aggregateName(), undefined, 'a repository stores AggregateRoot instances only');
    }
    return getAggregateName(this.aggregateClass ?? aggregate.constructor);
  }
}

function assertWriteFlowIntact(target: Function): void {
  for (let proto = target.prototype; proto && proto !== AbstractRepository.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const method of FIXED_METHODS) {
      if (Object.prototype.hasOwnProperty.call(proto, method)) {
        throw new RepositoryConfigurationError(
          `${proto.constructor.name} redefines ${method}(): the write methods fire the data-sync hook before every write ` +
            'and may not be replaced. Implement doInsert/doUpdate/doRemove instead, extend the aggregate\'s ' +
            'triggerDataSyncHook, or handle the published events (@OnDataSync).',
        );
      }
    }
  }
}
