import type { mongo } from 'mongoose';
import { PrepareKey } from '../../prepare-key.js';
import type { RecordPage, StoredRecord } from '../../prepare-key.interfaces.js';
import { TTL_FOREVER } from '../../prepared-value.js';
import type { MongoPrepareKeyDocument } from './mongo-prepare-key.interfaces.js';
import { isDuplicateKeyError } from './mongo-prepare-key.utils.js';
import type { MongoRecordCollection } from './mongo-record-collection.js';

type Update = mongo.UpdateFilter<MongoPrepareKeyDocument>;

const RECORD_PROJECTION = { projection: { _id: 0, value: 1, ttlAt: 1 } } as const;
/** Upserts per prepare: more than one only when the record that won the _id had already expired (or went away). */
const MAX_PREPARE_ATTEMPTS = 3;

/**
 * A PrepareKey on one MongoDB collection: a record is `{ _id: key, value, ttlAt, expireAt }`.
 * Each primitive is one single-document operation, atomic on the server; `prepare` relies on
 * the unique `_id`: of two writers racing for one key, one inserts and the other gets a
 * duplicate-key error. Expiry is decided with this process's clock (`Date.now()`), so the
 * instances of an application need synchronised clocks (NTP), as TTLs always do.
 */
export class MongoPrepareKey<V = unknown> extends PrepareKey<V> {
  constructor(
    readonly name: string,
    private readonly store: MongoRecordCollection,
    private readonly retentionMs: number,
  ) {
    super();
  }

  protected async doPrepare(key: string, value: string, ttlAt: number): Promise<boolean> {
    const id = stringKey(key);
    const update = this.write(value, ttlAt);
    const collection = this.store.collection ?? (await this.store.open());
    for (let attempt = 1; ; attempt++) {
      const now = this.now();
      try {
        // Matches an expired record, or inserts when there is none; an unexpired record makes
        // the insert fail on the unique _id (so does a concurrent writer's insert).
        await collection.updateOne({ _id: id, ttlAt: { $lte: now } }, update, { upsert: true });
        return true;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      // Held, unless the record that won the _id was already expired (or has gone since).
      const current = await collection.findOne({ _id: id }, RECORD_PROJECTION);
      if ((current !== null && current.ttlAt > now) || attempt === MAX_PREPARE_ATTEMPTS) return false;
    }
  }

  protected async doGetValue(key: string): Promise<StoredRecord | undefined> {
    const collection = this.store.collection ?? (await this.store.open());
    const record = await collection.findOne({ _id: stringKey(key) }, RECORD_PROJECTION);
    return record === null ? undefined : { value: record.value, ttlAt: record.ttlAt };
  }

  protected async doRollback(key: string, expected?: string): Promise<boolean> {
    const collection = this.store.collection ?? (await this.store.open());
    const filter = expected === undefined ? { _id: stringKey(key) } : { _id: stringKey(key), value: expected };
    return (await collection.deleteOne(filter)).deletedCount === 1;
  }

  protected async doReprepare(key: string, value: string, ttlAt: number, expected?: string): Promise<boolean> {
    const collection = this.store.collection ?? (await this.store.open());
    const filter =
      expected === undefined
        ? { _id: stringKey(key), ttlAt: { $gt: this.now() } }
        : { _id: stringKey(key), value: expected };
    return (await collection.updateOne(filter, this.write(value, ttlAt))).matchedCount === 1;
  }

  protected async doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage> {
    const collection = this.store.collection ?? (await this.store.open());
    const filter = cursor === undefined ? {} : { _id: { $gt: stringKey(cursor) } };
    const documents = await collection
      .find(filter, { sort: { _id: 1 }, limit: pageSize, projection: { value: 1, ttlAt: 1 } })
      .toArray();
    const records = documents.map((d) => ({ key: d._id, value: d.value, ttlAt: d.ttlAt }));
    return { records, next: records.length === pageSize ? records[records.length - 1].key : undefined };
  }

  /** The update that stores a record; `expireAt` is unset when MongoDB must never drop it. */
  private write(value: string, ttlAt: number): Update {
    const dropAt = ttlAt + this.retentionMs;
    if (ttlAt >= TTL_FOREVER || !Number.isSafeInteger(dropAt)) return { $set: { value, ttlAt }, $unset: { expireAt: '' } };
    return { $set: { value, ttlAt, expireAt: new Date(dropAt) } };
  }
}

/** Keys reach the primitives validated; this is the last guard before one becomes a filter. */
function stringKey(key: string): string {
  if (typeof key !== 'string') throw new TypeError('a record key must be a string');
  return key;
}
