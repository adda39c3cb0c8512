import type { mongo } from 'mongoose';
import { PrepareKey } from '../../prepare-key.js';
import type { RecordPage, RollbackCondition, StoredRecord } from '../../prepare-key.interfaces.js';
import { TTL_FOREVER } from '../../prepared-value.js';
import type { MongoPrepareKeyDocument } from './mongo-prepare-key.interfaces.js';
import { isDuplicateKeyError } from './mongo-prepare-key.utils.js';
import type { MongoRecordCollection } from './mongo-record-collection.js';

type Update = mongo.UpdateFilter<MongoPrepareKeyDocument>;

const RECORD_PROJECTION = { projection: { _id: 0, value: 1, ttlAt: 1, op: 1 } } as const;
/** Upserts per prepare: more than one only when the record that won the _id had already expired (or went away). */
const MAX_PREPARE_ATTEMPTS = 3;
/** How long a rollback's tombstone stays (the TTL index drops it): longer than any resend. */
export const TOMBSTONE_MS = 120_000;
/** The latest instant a JavaScript Date (and so a BSON date) can hold. */
const MAX_DATE_MS = 8_640_000_000_000_000;
/** A live record, as opposed to a tombstone (which has no value). */
const LIVE = { $type: 'string' } as const;

/**
 * A PrepareKey on one MongoDB collection: a record is `{ _id: key, value, ttlAt, op, expireAt }`.
 * Each primitive is one single-document operation, atomic on the server; `prepare` relies on
 * the unique `_id`: of two writers racing for one key, one inserts and the other gets a
 * duplicate-key error. Expiry is decided with this process's clock (`Date.now()`), so the
 * instances of an application need synchronised clocks (NTP), as TTLs always do.
 *
 * `op` names the operation that last wrote the record, and a rollback leaves a tombstone
 * `{ _id, op, expireAt }` (no value) for TOMBSTONE_MS: an operation that finds nothing to do
 * reads the record once more, and when it carries its own op (the same command, run twice
 * because a reply was lost and the driver or a proxy resent it) answers as the first run did.
 * The hot path (a prepare that wins) stays one round trip.
 */
export class MongoPrepareKey<V = unknown> extends PrepareKey<V> {
  constructor(
    readonly name: string,
    private readonly store: MongoRecordCollection,
    private readonly retentionMs: number,
  ) {
    super();
  }

  protected async doPrepare(key: string, value: string, ttlAt: number, op: string): Promise<boolean> {
    const id = stringKey(key);
    const update = this.write(value, ttlAt, op);
    const collection = this.store.collection ?? (await this.store.open());
    for (let attempt = 1; ; attempt++) {
      const now = this.now();
      try {
        // Matches an expired record or a tombstone, or inserts when there is none; an
        // unexpired record makes the insert fail on the unique _id (so does a concurrent
        // writer's insert).
        await collection.updateOne(
          { _id: id, $or: [{ ttlAt: { $lte: now } }, { value: { $exists: false } }] },
          update,
          { upsert: true },
        );
        return true;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      // Held, unless by this very operation (a resend), or the record that won the _id was
      // already expired (or has gone since).
      const current = await collection.findOne({ _id: id }, RECORD_PROJECTION);
      if (current?.op === op && current.value !== undefined) return true;
      if ((current?.value !== undefined && current.ttlAt! > now) || attempt === MAX_PREPARE_ATTEMPTS) return false;
    }
  }

  protected async doGetValue(key: string): Promise<StoredRecord | undefined> {
    const collection = this.store.collection ?? (await this.store.open());
    const record = await collection.findOne({ _id: stringKey(key) }, RECORD_PROJECTION);
    return record === null || record.value === undefined ? undefined : { value: record.value, ttlAt: record.ttlAt! };
  }

  /** One query per batch (`_id: { $in }`), its documents read through a cursor. */
  protected override async doGetValues(keys: readonly string[]): Promise<Array<StoredRecord | undefined>> {
    const collection = this.store.collection ?? (await this.store.open());
    const found = new Map<string, StoredRecord>();
    const ids = keys.map(stringKey);
    for await (const record of collection.find({ _id: { $in: ids } }, { projection: { value: 1, ttlAt: 1 } }))
      if (record.value !== undefined) found.set(record._id, { value: record.value, ttlAt: record.ttlAt! });
    return keys.map((key) => found.get(key));
  }

  protected async doRollback(key: string, op: string, condition?: RollbackCondition): Promise<boolean> {
    const collection = this.store.collection ?? (await this.store.open());
    const id = stringKey(key);
    const filter =
      condition?.value !== undefined
        ? { _id: id, value: condition.value }
        : condition?.op !== undefined
          ? { _id: id, op: condition.op, value: LIVE }
          : { _id: id, value: LIVE };
    const tombstone: Update = {
      $set: { op, expireAt: new Date(Date.now() + TOMBSTONE_MS) },
      $unset: { value: '', ttlAt: '' },
    };
    if ((await collection.updateOne(filter, tombstone)).matchedCount === 1) return true;
    return this.wasApplied(id, op, true);
  }

  protected async doReprepare(
    key: string,
    value: string,
    ttlAt: number,
    op: string,
    expected?: string,
  ): Promise<boolean> {
    const collection = this.store.collection ?? (await this.store.open());
    const id = stringKey(key);
    const filter =
      expected === undefined ? { _id: id, ttlAt: { $gt: this.now() }, value: LIVE } : { _id: id, value: expected };
    if ((await collection.updateOne(filter, this.write(value, ttlAt, op))).matchedCount === 1) return true;
    return this.wasApplied(id, op, false);
  }

  protected async doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage> {
    const collection = this.store.collection ?? (await this.store.open());
    // Tombstones are skipped here rather than in the filter: a range on _id alone walks the
    // _id index, page after page, on every server.
    const filter = cursor === undefined ? {} : { _id: { $gt: stringKey(cursor) } };
    const documents = await collection
      .find(filter, { sort: { _id: 1 }, limit: pageSize, projection: { value: 1, ttlAt: 1 } })
      .toArray();
    const records = documents
      .filter((d) => d.value !== undefined)
      .map((d) => ({ key: d._id, value: d.value!, ttlAt: d.ttlAt! }));
    return { records, next: documents.length === pageSize ? documents[documents.length - 1]._id : undefined };
  }

  /** True when the record (or, for a rollback, the tombstone) carries `op`: this operation already ran. */
  private async wasApplied(id: string, op: string, tombstone: boolean): Promise<boolean> {
    const collection = this.store.collection ?? (await this.store.open());
    const current = await collection.findOne({ _id: id }, RECORD_PROJECTION);
    return current !== null && current.op === op && (current.value === undefined) === tombstone;
  }

  /**
   * The update that stores a record; `expireAt` is unset when MongoDB must never drop it — a
   * forever record, and one whose drop time lies past what a date can hold (an invalid date
   * would be stored as 1970 and dropped at once).
   */
  private write(value: string, ttlAt: number, op: string): Update {
    const dropAt = ttlAt + this.retentionMs;
    if (ttlAt >= TTL_FOREVER || !Number.isSafeInteger(dropAt) || dropAt > MAX_DATE_MS) {
      return { $set: { value, ttlAt, op }, $unset: { expireAt: '' } };
    }
    return { $set: { value, ttlAt, op, expireAt: new Date(dropAt) } };
  }
}

/** Keys reach the primitives validated; this is the last guard before one becomes a filter. */
function stringKey(key: string): string {
  if (typeof key !== 'string') throw new TypeError('a record key must be a string');
  return key;
}
