import { assertAggregateId, isEmptyId } from '../aggregate/aggregate-id.utils.js';
import {
  collectWriteEvents,
  setDeleted,
  setStoredVersion,
  type AggregateClass,
  type AggregateRoot,
} from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import type { WriteEvents } from '../data-sync/write-events.js';
import type { KeyedWrite, UniqueKeyWriter, WriteKind } from '../unique-keys/unique-key.writer.js';
import type { WriteOptions } from './repository.interfaces.js';
import { checkExpectedVersion, checkInsertable, checkRemovable, checkUpdatable } from './write-preconditions.js';

/**
 * What the write flow needs of its repository. AbstractRepository hands it over once, as
 * closures over its own (partly protected) steps, so that no write allocates them.
 */
export interface WriteFlowSteps<ID extends AggregateId, T extends AggregateRoot<ID, any>> {
  /** The aggregate's name; throws when it is not an AggregateRoot. */
  nameOf(aggregate: T): string;
  /** An id for an aggregate inserted without one; throws when no generator is configured. */
  generateId(aggregate: T, name: string): string;
  /** The writer of the aggregate's unique keys, or null when it declares none. */
  uniqueKeyWriter(): UniqueKeyWriter<ID, T> | null;
  /** The backend's step for `kind`: doInsert, doUpdate or doRemove. */
  store(kind: WriteKind, aggregate: T, events: readonly DataSyncEvent[]): Promise<void>;
  /** Where the repository's events go once a write succeeded. */
  events(): WriteEvents;
  /** The class the events are published for. */
  aggregateType(aggregate: T): AggregateClass<T>;
  /** Runs `publish` once the write is durable (see AbstractRepository.whenWriteCommits). */
  whenWriteCommits(publish: () => Promise<void>): Promise<void>;
}

/**
 * The fixed write flow of AbstractRepository (its class comment lists the steps): the checks,
 * the data-sync hook, the backend's step between the unique-key reservations, then the versions
 * advanced and, once durable, the old keys released and the events published.
 *
 * insert, update and write are not `async`: a frame of their own would add a promise step to
 * every write. A failed check (or a throwing hook) still arrives as a rejection.
 */
export class RepositoryWriteFlow<ID extends AggregateId, T extends AggregateRoot<ID, any>> {
  constructor(private readonly steps: WriteFlowSteps<ID, T>) {}

  insert(aggregate: T): Promise<void> {
    try {
      const name = this.steps.nameOf(aggregate);
      checkInsertable(name, aggregate);
      if (isEmptyId(aggregate.id)) aggregate.id = this.steps.generateId(aggregate, name) as ID;
      assertAggregateId(name, aggregate.id);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.write('insert', aggregate);
  }

  update(aggregate: T, options?: WriteOptions): Promise<void> {
    try {
      const name = this.steps.nameOf(aggregate);
      assertAggregateId(name, aggregate.id);
      checkUpdatable(name, aggregate);
      checkExpectedVersion(name, aggregate, options, 'update');
    } catch (error) {
      return Promise.reject(error);
    }
    return this.write('update', aggregate);
  }

  /** Marks the aggregate deleted (the hook then collects PURGE) and undoes the mark when the delete fails. */
  async remove(aggregate: T, options?: WriteOptions): Promise<void> {
    const name = this.steps.nameOf(aggregate);
    assertAggregateId(name, aggregate.id);
    checkRemovable(name, aggregate);
    checkExpectedVersion(name, aggregate, options, 'remove');
    const wasDeleted = aggregate.isDeleted();
    aggregate.markDeleted();
    try {
      await this.write('remove', aggregate);
    } catch (error) {
      if (!wasDeleted) setDeleted(aggregate, false);
      throw error;
    }
  }

  // Without unique keys (the common path): the store's promise and one step after it.
  private write(kind: WriteKind, aggregate: T): Promise<void> {
    let name: string;
    let events: DataSyncEvent[];
    let written: number;
    let stored: Promise<void>;
    try {
      name = this.steps.nameOf(aggregate);
      events = collectWriteEvents(aggregate, name);
      written = aggregate.newVersion;
      const writer = this.steps.uniqueKeyWriter();
      if (writer !== null) return this.writeWithUniqueKeys(writer, kind, aggregate, name, events);
      stored = this.steps.store(kind, aggregate, events);
    } catch (error) {
      return Promise.reject(error);
    }
    return stored.then(() => {
      setStoredVersion(aggregate, written);
      return this.afterWrite(aggregate, name, events, undefined);
    });
  }

  /** The write between its unique-key reservations (see UniqueKeyWriter). */
  private async writeWithUniqueKeys(
    writer: UniqueKeyWriter<ID, T>,
    kind: WriteKind,
    aggregate: T,
    name: string,
    events: DataSyncEvent[],
  ): Promise<void> {
    const written = aggregate.newVersion;
    const keyed = await writer.write(kind, aggregate, () => this.steps.store(kind, aggregate, events));
    setStoredVersion(aggregate, written);
    await this.afterWrite(aggregate, name, events, keyed);
  }

  /**
   * Once the write is durable (at once, or when the enclosing transaction commits): the old
   * unique keys released and the events published. Nothing to wait for when there is neither.
   */
  private afterWrite(
    aggregate: T,
    name: string,
    events: DataSyncEvent[],
    keyed: KeyedWrite | undefined,
  ): Promise<void> | undefined {
    const writeEvents = this.steps.events();
    const type = this.steps.aggregateType(aggregate);
    if (keyed === undefined && !writeEvents.willPublish(type, events)) return undefined;
    return this.steps.whenWriteCommits(async () => {
      await keyed?.releaseOld();
      await writeEvents.publish(type, events, () => `${name} ${JSON.stringify(aggregate.id)}`);
    });
  }
}
