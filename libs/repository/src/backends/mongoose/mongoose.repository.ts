import type { Connection, mongo } from 'mongoose';
import { getAggregateName } from '../../aggregate/aggregate-name.utils.js';
import type { AggregateRoot } from '../../aggregate/aggregate-root.js';
import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { RepositoryConfigurationError, RepositoryError } from '../../errors.js';
import { AbstractRepository } from '../../repository/abstract-repository.js';
import { declareFeatureOption } from '../../storages/feature-option.storage.js';
import type { AggregatePage, LoadedAggregate, RepositoryOptions } from '../../repository/repository.interfaces.js';
import { MongoOutboxStore } from './mongo-outbox.store.js';
import type { OutboxStore } from '../../outbox/outbox.interfaces.js';
import {
  DELETED,
  entriesOf,
  entryPaths,
  newEntries,
  nextHint,
  OUTBOX,
  OUTBOX_FIELDS,
  OUTBOX_NEXT,
  OUTBOX_REV,
  pendingOf,
  withoutOutboxFields,
  type OutboxDocument,
  type OutboxEntry,
} from './mongo-outbox.records.js';

export interface MongooseRepositoryOptions<T extends AggregateRoot<any, any>> extends RepositoryOptions<T> {
  /** The connection whose database holds the collection. RepositoryModule passes its own. */
  connection?: Connection;
  /** The collection; default: the aggregate's name. */
  collection?: string;
}

/** A stored document: the subclass's fields plus `_id` and the version field. */
export type StoredDocument<ID extends AggregateId, D> = D & { _id: ID } & Record<string, unknown>;

const DUPLICATE_KEY = 11000;
/** Compare-and-set rounds of an insert over a tombstone before it gives up (only concurrent relays change a tombstone). */
const TOMBSTONE_ROUNDS = 50;

/** How documents look to the driver: a plain `_id` (never an ObjectId) and any fields. */
interface RawDocument {
  _id: AggregateId;
  [field: string]: unknown;
}

/**
 * Aggregates as MongoDB documents `{ _id: id, <version field>: n, ...fields }` through a
 * Mongoose connection. A subclass maps the fields (`toDocument`, `toAggregate`); `_id`, the
 * version field, the conditional writes, deletes and `currentVersion` belong to this class.
 *
 * Each operation is one command on the driver's collection (obtained from the connection):
 *   insert        insertOne({ _id, ...fields, version: newVersion })       duplicate → DuplicateAggregateError
 *   update        updateOne({ _id, version: oldVersion }, { $set: { ...fields, version: newVersion } })
 *                                                                           no match → OptimisticLockError
 *   remove        deleteOne({ _id, version: oldVersion })                   no match → OptimisticLockError
 *   findById      findOne({ _id })
 *   currentVersion findOne({ _id }, { projection: { version: 1 } })       none → -1
 * The native collection rather than a Model: a Model would cast every filter and update
 * against a schema, hydrate documents and run middleware on the hot path, and the mapping
 * here is the subclass's job anyway; documents are read as plain (lean) objects.
 *
 * IDs reach these filters only after AbstractRepository checked them to be a string or a
 * finite number, so an id is always a plain value: `{ "$ne": null }` is refused, never sent.
 */
export abstract class MongooseRepository<
  ID extends AggregateId,
  T extends AggregateRoot<ID, any>,
  D extends object = Record<string, unknown>,
> extends AbstractRepository<ID, T> {
  static {
    declareFeatureOption(this, 'collection');
  }

  // Set through `configure` (from the constructor or the backend), so these fields have no
  // initialisers: with useDefineForClassFields off an initialiser would run after the base
  // constructor and wipe what it configured.
  private connection?: Connection;
  private collectionName?: string;
  private nativeCollection?: mongo.Collection<RawDocument>;
  private outboxRegistered?: MongoOutboxStore;

  constructor(options: MongooseRepositoryOptions<T> = {}) {
    super(options);
  }

  /** Also takes the `connection` and `collection` (each set once: a later value is ignored). */
  override configure(options: MongooseRepositoryOptions<T>): void {
    super.configure(options);
    const outbox = this.outbox;
    if (outbox instanceof MongoOutboxStore && this.outboxRegistered !== outbox) {
      // The store learns this collection now, so a process that only relays claims from it too.
      this.outboxRegistered = outbox;
      outbox.addSource(() => this.collection());
    }
    if (options.connection !== undefined && options.connection !== null && this.connection === undefined) {
      this.connection = options.connection;
    }
    if (options.collection !== undefined && this.collectionName === undefined) {
      if (
        typeof options.collection !== 'string' ||
        options.collection.length === 0 ||
        options.collection.includes('$')
      ) {
        throw new RepositoryConfigurationError(
          `${this.constructor.name}: collection must be a non-empty string without '$', got ${JSON.stringify(options.collection)}`,
        );
      }
      this.collectionName = options.collection;
    }
  }

  /**
   * With `outbox: MongoOutboxStore`, each write keeps its data-sync events in the written
   * document (`_outbox`), in the same single-document write: no multi-document transaction,
   * so a standalone server will do. A removed aggregate stays as a tombstone, invisible to
   * every read, until its events are delivered.
   */
  protected override acceptsOutbox(outbox: OutboxStore): boolean {
    return outbox instanceof MongoOutboxStore;
  }

  /** True when writes keep their data-sync events in the document. */
  private get usesOutbox(): boolean {
    return this.outbox !== undefined;
  }

  /** True once a connection is configured. */
  get hasConnection(): boolean {
    return this.connection !== undefined;
  }

  override checkConfiguration(): void {
    if (this.connection === undefined) {
      throw new RepositoryConfigurationError(
        `${this.constructor.name} is a MongooseRepository but RepositoryModule has no connection: pass { uri } or { connection } ` +
          'to RepositoryModule.forRoot / forRootAsync.',
      );
    }
  }

  /** The name of the field holding the version. Override (as a getter) to use another. */
  protected get versionField(): string {
    return 'version';
  }

  /** The fields to store, without `_id` and without the version field (both are this class's). */
  protected abstract toDocument(aggregate: T): D;

  /** The aggregate rebuilt from a stored document (`_id` and the version field included). */
  protected abstract toAggregate(document: StoredDocument<ID, D>): T;

  protected async doInsert(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    const collection = this.nativeCollection ?? (await this.resolveCollection());
    const fields = this.fieldsOf(aggregate);
    const entries = this.usesOutbox ? newEntries(events, Date.now()) : [];
    const document: Record<string, unknown> = {
      ...fields,
      _id: aggregate.id,
      [this.versionField]: aggregate.newVersion,
    };
    if (this.usesOutbox) {
      document[OUTBOX] = Object.fromEntries(entries.map((entry) => [entry.eventId, entry]));
      document[OUTBOX_REV] = 0;
      const next = nextHint(entries);
      if (next !== undefined) document[OUTBOX_NEXT] = next;
    }
    try {
      await collection.insertOne(document as RawDocument);
    } catch (error) {
      if ((error as { code?: unknown }).code !== DUPLICATE_KEY) throw error;
      if (!this.usesOutbox || !(await this.insertOverTombstone(collection, aggregate, fields, entries)))
        throw this.duplicate(aggregate, error);
    }
  }

  protected async doUpdate(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    const collection = this.nativeCollection ?? (await this.resolveCollection());
    const versionField = this.versionField;
    const fields = this.fieldsOf(aggregate);
    if (!this.usesOutbox) {
      // One conditional write and nothing else: the filter is the optimistic lock.
      const result = await collection.updateOne(
        { _id: aggregate.id, [versionField]: aggregate.oldVersion },
        { $set: { ...fields, [versionField]: aggregate.newVersion } },
      );
      if (result.matchedCount === 0) throw this.conflict(aggregate);
      return;
    }
    // Still one conditional write: the events ride in it, under paths of their own.
    const entries = newEntries(events, Date.now());
    const set: Record<string, unknown> = { ...fields, [versionField]: aggregate.newVersion, ...entryPaths(entries) };
    if (entries.length > 0) set[OUTBOX_NEXT] = entries[0].storedAt;
    const result = await collection.updateOne(
      { _id: aggregate.id, [versionField]: aggregate.oldVersion, [DELETED]: { $ne: true } },
      { $set: set, $inc: { [OUTBOX_REV]: 1 } } as unknown as mongo.UpdateFilter<RawDocument>,
    );
    if (result.matchedCount === 0) throw this.conflict(aggregate);
  }

  protected async doRemove(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    const collection = this.nativeCollection ?? (await this.resolveCollection());
    const versionField = this.versionField;
    if (!this.usesOutbox) {
      const result = await collection.deleteOne({ _id: aggregate.id, [versionField]: aggregate.oldVersion });
      if (result.deletedCount === 0) throw this.conflict(aggregate);
      return;
    }
    // The document becomes a tombstone carrying the PURGE (and whatever is still pending):
    // deleting it would lose them. Its fields go now; the document goes once its outbox is empty.
    const entries = newEntries(events, Date.now());
    const unset: Record<string, ''> = {};
    for (const field of Object.keys(this.fieldsOf(aggregate))) unset[field] = '';
    const set: Record<string, unknown> = {
      [versionField]: aggregate.newVersion,
      [DELETED]: true,
      ...entryPaths(entries),
    };
    // Even with no event, a tombstone must be found by the store to be cleaned up.
    set[OUTBOX_NEXT] = entries[0]?.storedAt ?? Date.now();
    const update: Record<string, unknown> = { $set: set, $inc: { [OUTBOX_REV]: 1 } };
    if (Object.keys(unset).length > 0) update.$unset = unset;
    const result = await collection.updateOne(
      { _id: aggregate.id, [versionField]: aggregate.oldVersion, [DELETED]: { $ne: true } },
      update as unknown as mongo.UpdateFilter<RawDocument>,
    );
    if (result.matchedCount === 0) throw this.conflict(aggregate);
  }

  /**
   * An insert whose id is held by a tombstone (a removed aggregate whose events are still being
   * delivered) takes the document over: the new aggregate's fields and events join the pending
   * ones, which stay first in delivery order. Resolves false when the id is held by a live
   * aggregate (a real duplicate).
   */
  private async insertOverTombstone(
    collection: mongo.Collection<RawDocument>,
    aggregate: T,
    fields: D,
    entries: OutboxEntry[],
  ): Promise<boolean> {
    for (let round = 0; round < TOMBSTONE_ROUNDS; round++) {
      const existing = (await collection.findOne({ _id: aggregate.id })) as OutboxDocument | null;
      if (existing === null) {
        // Its outbox drained and the tombstone went meanwhile: a plain insert again.
        const document: Record<string, unknown> = {
          ...fields,
          _id: aggregate.id,
          [this.versionField]: aggregate.newVersion,
          [OUTBOX]: Object.fromEntries(entries.map((entry) => [entry.eventId, entry])),
          [OUTBOX_REV]: 0,
        };
        const next = nextHint(entries);
        if (next !== undefined) document[OUTBOX_NEXT] = next;
        try {
          await collection.insertOne(document as RawDocument);
          return true;
        } catch (error) {
          if ((error as { code?: unknown }).code === DUPLICATE_KEY) continue;
          throw error;
        }
      }
      if (existing[DELETED] !== true) return false;
      const outbox: Record<string, OutboxEntry> = {};
      for (const entry of entriesOf(existing)) outbox[entry.eventId] = { ...entry, older: (entry.older ?? 0) + 1 };
      for (const entry of entries) outbox[entry.eventId] = entry;
      const set: Record<string, unknown> = { ...fields, [this.versionField]: aggregate.newVersion, [OUTBOX]: outbox };
      const next = nextHint(pendingOf({ _id: aggregate.id, [OUTBOX]: outbox }));
      const update: Record<string, unknown> = { $set: set, $inc: { [OUTBOX_REV]: 1 }, $unset: { [DELETED]: '' } };
      if (next !== undefined) set[OUTBOX_NEXT] = next;
      else (update.$unset as Record<string, ''>)[OUTBOX_NEXT] = '';
      const result = await collection.updateOne(
        { _id: aggregate.id, [DELETED]: true, [OUTBOX_REV]: existing[OUTBOX_REV] ?? 0 },
        update as unknown as mongo.UpdateFilter<RawDocument>,
      );
      if (result.matchedCount === 1) return true;
    }
    throw new RepositoryError(
      `${this.aggregateName()} ${JSON.stringify(aggregate.id)}: the removed aggregate's document kept changing; the insert did not happen, try again`,
    );
  }

  protected override async doFindById(id: ID): Promise<LoadedAggregate<T> | null> {
    const collection = this.nativeCollection ?? (await this.resolveCollection());
    const document = await collection.findOne(this.live({ _id: id }));
    if (document === null) return null;
    const version = this.versionOf(document, id);
    return { aggregate: this.toAggregate(this.ownFields(document) as unknown as StoredDocument<ID, D>), version };
  }

  /** One query per batch (`_id: { $in: ids }`; the ids are checked values, never operators). */
  protected override async doFindByIds(ids: readonly ID[]): Promise<Array<LoadedAggregate<T> | null>> {
    const collection = this.nativeCollection ?? (await this.resolveCollection());
    const documents = await collection.find(this.live({ _id: { $in: [...ids] } })).toArray();
    return documents.map((document) => ({
      aggregate: this.toAggregate(this.ownFields(document) as unknown as StoredDocument<ID, D>),
      version: this.versionOf(document, document._id as ID),
    }));
  }

  protected override async doListPage(cursor: ID | undefined, pageSize: number): Promise<AggregatePage<ID, T>> {
    const collection = this.nativeCollection ?? (await this.resolveCollection());
    const filter = this.live(cursor === undefined ? {} : { _id: { $gt: cursor } });
    const documents = await collection.find(filter, { sort: { _id: 1 }, limit: pageSize }).toArray();
    const aggregates = documents.map((document) => ({
      aggregate: this.toAggregate(this.ownFields(document) as unknown as StoredDocument<ID, D>),
      version: this.versionOf(document, document._id as ID),
    }));
    return {
      aggregates,
      next: documents.length === pageSize ? (documents[documents.length - 1]._id as ID) : undefined,
    };
  }

  protected override async doCurrentVersion(id: ID): Promise<number> {
    const collection = this.nativeCollection ?? (await this.resolveCollection());
    const versionField = this.versionField;
    const document = await collection.findOne(this.live({ _id: id }), { projection: { _id: 0, [versionField]: 1 } });
    return document === null ? -1 : this.versionOf(document, id);
  }

  /** The driver's collection, once the connection is open. */
  protected async collection(): Promise<mongo.Collection<RawDocument>> {
    return this.nativeCollection ?? (await this.resolveCollection());
  }

  private async resolveCollection(): Promise<mongo.Collection<RawDocument>> {
    const connection = this.connection;
    if (connection === undefined) {
      throw new RepositoryConfigurationError(
        `${this.constructor.name} has no Mongoose connection: register it with RepositoryModule.forFeature ` +
          'after RepositoryModule.forRoot({ uri } or { connection }), or pass { connection } to its constructor.',
      );
    }
    // Connections opened lazily (or still connecting) have no `db` yet.
    if (connection.db === undefined || connection.readyState !== 1) await connection.asPromise();
    const db = connection.db;
    if (db === undefined)
      throw new RepositoryConfigurationError(`${this.constructor.name}: the Mongoose connection has no database`);
    const name = this.collectionName ?? (this.aggregateType ? getAggregateName(this.aggregateType) : undefined);
    if (name === undefined) {
      throw new RepositoryConfigurationError(
        `${this.constructor.name} needs { aggregate } or { collection } to know its collection`,
      );
    }
    this.nativeCollection = db.collection<RawDocument>(name);
    return this.nativeCollection;
  }

  /** A read's filter, without tombstones when the outbox is on. */
  private live(filter: Record<string, unknown>): Record<string, unknown> {
    return this.usesOutbox ? { ...filter, [DELETED]: { $ne: true } } : filter;
  }

  /** A read document as the subclass sees it: without the outbox's fields. */
  private ownFields(document: RawDocument): RawDocument {
    return this.usesOutbox ? withoutOutboxFields(document) : document;
  }

  private fieldsOf(aggregate: T): D {
    const fields = this.toDocument(aggregate);
    if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
      throw new RepositoryConfigurationError(`${this.constructor.name}.toDocument must return an object of fields`);
    }
    if ('_id' in fields || this.versionField in fields) {
      throw new RepositoryConfigurationError(
        `${this.constructor.name}.toDocument must not set _id or ${this.versionField}: the repository writes them`,
      );
    }
    if (this.usesOutbox) {
      const taken = OUTBOX_FIELDS.filter((field) => field in fields);
      if (taken.length > 0)
        throw new RepositoryConfigurationError(
          `${this.constructor.name}.toDocument must not set ${taken.join(', ')}: the outbox writes them`,
        );
    }
    return fields;
  }

  private versionOf(document: Partial<RawDocument>, id: ID): number {
    const version = document[this.versionField];
    if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
      throw new RepositoryError(
        `${this.aggregateName()} ${JSON.stringify(id)}: the stored document has no valid '${this.versionField}' ` +
          '(a positive integer); it was not written by this repository.',
      );
    }
    return version;
  }
}
