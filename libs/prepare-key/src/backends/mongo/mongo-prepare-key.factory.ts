import type { Connection } from 'mongoose';
import { PrepareKeyArgumentError } from '../../errors.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PrepareKeyFactory } from '../../prepare-key.factory.js';
import { assertName } from '../../prepare-key.validation.js';
import {
  DEFAULT_MONGO_COLLECTION_PREFIX,
  DEFAULT_MONGO_RETENTION_MS,
  MAX_COLLECTION_NAME_LENGTH,
} from './mongo-prepare-key.constants.js';
import type { MongoPrepareKeyFactoryOptions } from './mongo-prepare-key.interfaces.js';
import { MongoPrepareKey } from './mongo-prepare-key.js';
import { encodeCollectionPart, pingMongo } from './mongo-prepare-key.utils.js';
import { MongoRecordCollection } from './mongo-record-collection.js';

/**
 * PrepareKeys on MongoDB through a mongoose connection, shared by every instance of an
 * application: one collection a name (`prepare_<name>` by default), a record a document whose
 * `_id` is the key. A TTL index drops expired records `retentionMs` after their ttlAt.
 *
 * The connection stays the caller's: the factory neither opens nor closes it.
 */
export class MongoPrepareKeyFactory extends PrepareKeyFactory {
  private readonly collectionPrefix: string;
  private readonly retentionMs: number;
  /** One per collection, so the index is created once however many keys share a name. */
  private readonly collections = new Map<string, MongoRecordCollection>();

  constructor(
    private readonly connection: Connection,
    options: MongoPrepareKeyFactoryOptions = {},
  ) {
    super();
    if (typeof (connection as Partial<Connection> | undefined)?.asPromise !== 'function') {
      throw new PrepareKeyArgumentError(
        'MongoPrepareKeyFactory: pass a mongoose Connection, e.g. `mongoose.createConnection(uri)` or the one @nestjs/mongoose provides',
      );
    }
    const { collectionPrefix = DEFAULT_MONGO_COLLECTION_PREFIX, retentionMs = DEFAULT_MONGO_RETENTION_MS } = options;
    if (
      typeof collectionPrefix !== 'string' ||
      /[$\0]/.test(collectionPrefix) ||
      collectionPrefix.startsWith('system.')
    ) {
      throw new PrepareKeyArgumentError(
        `MongoPrepareKeyFactory: collectionPrefix must be a string without '$' or NUL that does not start with 'system.', got ${JSON.stringify(collectionPrefix)}`,
      );
    }
    if (retentionMs !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(retentionMs) && retentionMs >= 0)) {
      throw new PrepareKeyArgumentError(
        `MongoPrepareKeyFactory: retentionMs must be a non-negative integer number of milliseconds (or Infinity), got ${String(retentionMs)}`,
      );
    }
    this.collectionPrefix = collectionPrefix;
    this.retentionMs = retentionMs;
  }

  create<V = unknown>(name: string): PrepareKey<V> {
    assertName(name);
    const collectionName = `${this.collectionPrefix}${encodeCollectionPart(name)}`;
    if (collectionName.length > MAX_COLLECTION_NAME_LENGTH) {
      throw new PrepareKeyArgumentError(
        `MongoPrepareKeyFactory: the PrepareKey name '${name}' gives the collection name '${collectionName}', longer than ${MAX_COLLECTION_NAME_LENGTH} characters; choose a shorter name`,
      );
    }
    let records = this.collections.get(collectionName);
    if (records === undefined) {
      records = new MongoRecordCollection(this.connection, collectionName);
      this.collections.set(collectionName, records);
    }
    return new MongoPrepareKey<V>(name, records, this.retentionMs);
  }

  /** The `ping` command on the connection's database. */
  override async ping(): Promise<void> {
    await pingMongo(this.connection);
  }
}
