import type { DataSyncEvent } from '@ddd-kit/repository';
import type { ReplicaPage } from '@ddd-kit/repository/reconciliation';
import type { Connection, mongo } from 'mongoose';
import type { UserSnapshot, UserView } from '../users/user.aggregate.js';
import { UserReadModel } from './user-read-model.js';

interface UserViewDocument {
  _id: string;
  username?: string;
  version: number;
  /** A tombstone: the user was deleted at `version`. */
  deleted?: boolean;
}

const DUPLICATE_KEY = 11000;

/**
 * The read model in a MongoDB collection shared by every instance of the app. Filter values
 * are either wrapped in `$eq` or checked to be strings, so none can act as a query operator.
 *
 * Idempotent by version, as events delivered at least once require: an event no newer than
 * what the collection holds changes nothing. A PURGE leaves a tombstone (`deleted`, with its
 * version) rather than deleting the document, so an older UPSERT delivered after it (a
 * redelivery, a replayed dead letter) cannot bring the user back. Tombstones are invisible to
 * queries and to reconciliation; ids are never reused.
 */
export class MongoUserReadModel extends UserReadModel {
  private readonly collection: mongo.Collection<UserViewDocument>;
  private indexes?: Promise<unknown>;

  constructor(connection: Connection, collectionName = 'user_views') {
    super();
    this.collection = connection.collection<UserViewDocument>(
      collectionName,
    ) as unknown as mongo.Collection<UserViewDocument>;
  }

  /** Created once, at start-up (backends/ calls it before the app serves). */
  ensureIndexes(): Promise<unknown> {
    this.indexes ??= this.collection.createIndex({ username: 1 });
    return this.indexes;
  }

  async findByUsername(username: string): Promise<UserView[]> {
    const docs = await this.collection
      .find({ username: { $eq: username }, deleted: { $ne: true } })
      .sort({ _id: 1 })
      .toArray();
    return docs.map((d) => ({ id: d._id, username: d.username!, version: d.version }));
  }

  async apply(events: readonly DataSyncEvent<string, UserSnapshot>[]): Promise<void> {
    for (const event of events) {
      // The upsert's document takes its _id from a plain equality in the filter (servers differ
      // on whether `$eq` seeds it); the id is the aggregate's own, checked to be a string.
      if (typeof event.id !== 'string') throw new TypeError(`user id must be a string, got ${typeof event.id}`);
      const update: mongo.UpdateFilter<UserViewDocument> =
        event.type === 'PURGE'
          ? { $set: { version: event.version, deleted: true }, $unset: { username: '' as const } }
          : { $set: { username: event.snapshot.username, version: event.version }, $unset: { deleted: '' as const } };
      try {
        // Only a newer version replaces what is held; when a newer one is already there the
        // upsert's insert collides with it, which means "nothing to do".
        await this.collection.updateOne({ _id: event.id, version: { $lt: event.version } }, update, { upsert: true });
      } catch (err) {
        if ((err as { code?: number }).code !== DUPLICATE_KEY) throw err;
      }
    }
  }

  async listVersions({ cursor, limit }: { cursor: string | null; limit: number }): Promise<ReplicaPage<string>> {
    const filter = cursor === null ? { deleted: { $ne: true } } : { _id: { $gt: cursor }, deleted: { $ne: true } };
    const docs = await this.collection
      .find(filter, { projection: { version: 1 } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return {
      entries: docs.map((d) => ({ id: d._id, version: d.version })),
      cursor: docs.length === limit ? docs[docs.length - 1]._id : null,
    };
  }

  async upsert(id: string, version: number, snapshot: UserSnapshot): Promise<void> {
    if (typeof id !== 'string') throw new TypeError(`user id must be a string, got ${typeof id}`);
    await this.collection.replaceOne({ _id: id }, { username: snapshot.username, version }, { upsert: true });
  }

  /** Reconciliation's purge (the user is gone): a tombstone at the version held, so no event it already saw comes back. */
  async purge(id: string): Promise<void> {
    await this.collection.updateOne({ _id: { $eq: id } }, { $set: { deleted: true }, $unset: { username: '' } });
  }
}
