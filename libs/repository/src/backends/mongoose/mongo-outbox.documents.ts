import type { mongo } from 'mongoose';
import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import { RepositoryError } from '../../errors.js';
import { checkEventIds, tallyOutboxStatus } from '../../outbox/outbox-arguments.js';
import type { OutboxClaim, OutboxStatus } from '../../outbox/outbox.interfaces.js';
import {
  DELETED,
  entriesOf,
  isClaimable,
  isStorableEventId,
  nextHint,
  OUTBOX,
  OUTBOX_DEAD,
  OUTBOX_NEXT,
  OUTBOX_REV,
  pendingOf,
  toRecord,
  type OutboxDocument,
  type OutboxEntry,
} from './mongo-outbox.records.js';

// What MongoOutboxStore does to one document's outbox: every change a compare-and-set on its
// `_outboxRev`, re-read and re-applied when a write or another relay changed it meanwhile.

export type OutboxCollection = mongo.Collection<OutboxDocument>;

/** Compare-and-set rounds on one document before an operation gives up (each lost round means another writer changed it). */
const CAS_ROUNDS = 100;

/** The outbox inside one document, as one change to make and how it ends. */
export interface Change<R> {
  /** Entries to write back (by id); entries absent here are removed. */
  outbox: Record<string, OutboxEntry>;
  result: R;
}

/** Claims one document read as `document`, or tidies its hint when it has nothing claimable; null when not claimed. */
export async function claimDocument(
  collection: OutboxCollection,
  document: OutboxDocument,
  owner: string,
  now: number,
  leaseUntil: number,
): Promise<OutboxClaim | null> {
  const pending = pendingOf(document);
  const rev = document[OUTBOX_REV] ?? 0;
  if (!isClaimable(pending, now)) {
    // Nothing claimable now: move its hint to when it may be, so later claims skip it.
    await writeBack(collection, document, rev, document[OUTBOX] ?? {});
    return null;
  }
  const set: Record<string, unknown> = { [OUTBOX_NEXT]: leaseUntil };
  for (const entry of pending) {
    set[`${OUTBOX}.${entry.eventId}.owner`] = owner;
    set[`${OUTBOX}.${entry.eventId}.leaseUntil`] = leaseUntil;
  }
  // A compare-and-set updateOne, not findOneAndUpdate: the MongoDB-wire emulator the tests
  // run on lets two concurrent findOneAndUpdate calls match the same revision (tried: about
  // one contested round in ten), while its updateOne is atomic, as both are on MongoDB. What
  // was claimed is known without reading it back: the entries of the revision that matched.
  const result = await collection.updateOne(
    { _id: document._id, [OUTBOX_REV]: rev } as mongo.Filter<OutboxDocument>,
    { $set: set, $inc: { [OUTBOX_REV]: 1 } } as unknown as mongo.UpdateFilter<OutboxDocument>,
  );
  if (result.matchedCount !== 1) return null; // changed since it was read: someone else's now, or a newer write; a later claim sees it
  return {
    aggregate: pending[0].event.aggregate,
    aggregateId: document._id,
    owner,
    leaseUntil,
    events: pending.map((entry) => toRecord({ ...entry, owner, leaseUntil }, document._id)),
  };
}

/**
 * Applies `change` to a document with compare-and-set on `_outboxRev`, re-reading and
 * re-applying it when a concurrent write or relay changed the document meanwhile. Resolves
 * the change's result, or null when the change decided there was nothing to do.
 */
export async function changeDocument<R>(
  collection: OutboxCollection,
  document: OutboxDocument,
  change: (collection: OutboxCollection, document: OutboxDocument) => Promise<Change<R> | null>,
): Promise<R | null> {
  let current: OutboxDocument | null = document;
  for (let round = 0; round < CAS_ROUNDS && current !== null; round++) {
    const decided = await change(collection, current);
    if (decided === null) return null;
    if (await writeBack(collection, current, current[OUTBOX_REV] ?? 0, decided.outbox)) return decided.result;
    current = await collection.findOne({ _id: current._id } as mongo.Filter<OutboxDocument>);
  }
  if (current === null) return null;
  throw new RepositoryError(
    `The outbox of ${JSON.stringify(document._id)} kept changing under ${CAS_ROUNDS} attempts; nothing was changed, try again`,
  );
}

/**
 * Writes `outbox` back to a document read at revision `rev`, with the hint and the dead-letter
 * count that follow from it; a drained tombstone is deleted. False when the document changed
 * since (nothing written).
 */
export async function writeBack(
  collection: OutboxCollection,
  document: OutboxDocument,
  rev: number,
  outbox: Record<string, OutboxEntry>,
): Promise<boolean> {
  const filter = { _id: document._id, [OUTBOX_REV]: rev } as mongo.Filter<OutboxDocument>;
  const entries = Object.values(outbox);
  if (document[DELETED] === true && entries.length === 0) {
    return (await collection.deleteOne(filter)).deletedCount === 1;
  }
  const pending = pendingOf({ _id: document._id, [OUTBOX]: outbox });
  const dead = entries.length - pending.length;
  const next = nextHint(pending);
  // Only what changed is sent: entries removed are unset, entries changed are set whole.
  const before = document[OUTBOX] ?? {};
  const set: Record<string, unknown> = {};
  const unset: Record<string, ''> = {};
  for (const id of Object.keys(before)) if (outbox[id] === undefined) unset[`${OUTBOX}.${id}`] = '';
  for (const [id, entry] of Object.entries(outbox)) if (!sameEntry(before[id], entry)) set[`${OUTBOX}.${id}`] = entry;
  if (next === undefined) unset[OUTBOX_NEXT] = '';
  else set[OUTBOX_NEXT] = next;
  if (dead === 0) unset[OUTBOX_DEAD] = '';
  else set[OUTBOX_DEAD] = dead;
  const update: Record<string, unknown> = { $inc: { [OUTBOX_REV]: 1 } };
  if (Object.keys(set).length > 0) update.$set = set;
  if (Object.keys(unset).length > 0) update.$unset = unset;
  return (
    (await collection.updateOne(filter, update as unknown as mongo.UpdateFilter<OutboxDocument>)).matchedCount === 1
  );
}

/**
 * Runs `change` on every document holding one of `eventIds` leased to `owner`: those the store
 * claimed (`located`) are read by id; the rest are looked for among the documents with pending events.
 */
export async function changeDocumentsHolding<R>(
  collections: readonly OutboxCollection[],
  located: ReadonlyMap<string, { collection: OutboxCollection; id: AggregateId }>,
  eventIds: readonly string[],
  owner: string,
  change: (collection: OutboxCollection, document: OutboxDocument) => Promise<Change<R> | null>,
  collect: (result: R) => void,
): Promise<void> {
  const byCollection = new Map<OutboxCollection, Set<AggregateId>>();
  const unlocated: string[] = [];
  for (const id of eventIds) {
    const place = located.get(id);
    if (place === undefined) {
      unlocated.push(id);
      continue;
    }
    const ids = byCollection.get(place.collection) ?? new Set<AggregateId>();
    ids.add(place.id);
    byCollection.set(place.collection, ids);
  }
  const done = new Set<string>();
  for (const collection of collections) {
    const ids = byCollection.get(collection);
    const filters: Array<Record<string, unknown>> = [];
    if (ids !== undefined) filters.push({ _id: { $in: [...ids] } });
    if (unlocated.length > 0) filters.push({ [OUTBOX_NEXT]: { $exists: true } });
    for (const filter of filters) {
      const documents = await collection.find(filter as mongo.Filter<OutboxDocument>).toArray();
      for (const document of documents) {
        const key = JSON.stringify(document._id);
        if (done.has(key)) continue;
        const outbox = document[OUTBOX] ?? {};
        if (!eventIds.some((id) => outbox[id]?.owner === owner)) continue;
        done.add(key);
        const result = await changeDocument(collection, document, change);
        if (result !== null) collect(result);
      }
    }
    done.clear();
  }
}

/** Pending events, the longest wait of a due one, dead letters and the oldest's death, over the documents that have any (see OutboxStore.status). */
export async function countOutbox(collections: readonly OutboxCollection[], now: number): Promise<OutboxStatus> {
  const entries: OutboxEntry[] = [];
  for (const collection of collections) {
    const documents = await collection
      .find({
        $or: [{ [OUTBOX_NEXT]: { $exists: true } }, { [OUTBOX_DEAD]: { $gt: 0 } }],
      } as mongo.Filter<OutboxDocument>)
      // Only the events: a health check must not read every pending aggregate's whole state.
      .project<OutboxDocument>({ [OUTBOX]: 1 })
      .toArray();
    for (const document of documents) entries.push(...entriesOf(document));
  }
  return tallyOutboxStatus(entries, now);
}

/** Every dead letter, with the id of the document holding it. */
export async function deadLettersIn(
  collections: readonly OutboxCollection[],
): Promise<Array<{ entry: OutboxEntry; id: AggregateId }>> {
  const letters: Array<{ entry: OutboxEntry; id: AggregateId }> = [];
  for (const collection of collections) {
    const documents = await collection.find({ [OUTBOX_DEAD]: { $gt: 0 } } as mongo.Filter<OutboxDocument>).toArray();
    for (const document of documents) {
      for (const entry of entriesOf(document)) if (entry.deadAt !== null) letters.push({ entry, id: document._id });
    }
  }
  return letters;
}

function sameEntry(a: OutboxEntry | undefined, b: OutboxEntry): boolean {
  return (
    a !== undefined &&
    a.owner === b.owner &&
    a.leaseUntil === b.leaseUntil &&
    a.attempts === b.attempts &&
    a.nextAttemptAt === b.nextAttemptAt &&
    a.deadAt === b.deadAt &&
    a.lastError === b.lastError &&
    (a.older ?? 0) === (b.older ?? 0)
  );
}

/** Event ids as every store checks them, and as a field name may hold them (letters, digits, '-', '_'). */
export function checkIds(ids: unknown): string[] {
  const checked = checkEventIds(ids);
  // An id becomes part of a field path here: one that could not have been stored is refused
  // rather than sent (it could name another field or an operator).
  for (const id of checked)
    if (!isStorableEventId(id)) throw new TypeError(`outbox: not an event id of this store: ${JSON.stringify(id)}`);
  return checked;
}
