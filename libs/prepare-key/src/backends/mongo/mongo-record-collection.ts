import type { Connection, mongo } from 'mongoose';
import { EXPIRE_AT_INDEX } from './mongo-prepare-key.constants.js';
import type { MongoPrepareKeyDocument } from './mongo-prepare-key.interfaces.js';

/**
 * The collection of one name, opened once: the first operation waits for the connection and
 * creates the TTL index on `expireAt` (idempotent on the server), later ones use the driver's
 * collection directly. A failed opening is forgotten, so the next operation tries again.
 */
export class MongoRecordCollection {
  /** Set once open: the hot path reads it without awaiting anything. */
  collection: mongo.Collection<MongoPrepareKeyDocument> | undefined;
  private opening: Promise<mongo.Collection<MongoPrepareKeyDocument>> | undefined;

  constructor(
    private readonly connection: Connection,
    readonly collectionName: string,
  ) {}

  open(): Promise<mongo.Collection<MongoPrepareKeyDocument>> {
    this.opening ??= this.doOpen().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }

  private async doOpen(): Promise<mongo.Collection<MongoPrepareKeyDocument>> {
    await this.connection.asPromise();
    const db = this.connection.db;
    if (db === undefined) {
      throw new Error(
        'MongoPrepareKeyFactory: the mongoose connection has not been opened; open it (mongoose.createConnection(uri)) before using its PrepareKeys',
      );
    }
    const collection = db.collection<MongoPrepareKeyDocument>(this.collectionName);
    await collection.createIndex({ expireAt: 1 }, { name: EXPIRE_AT_INDEX, expireAfterSeconds: 0 });
    this.collection = collection;
    return collection;
  }
}
