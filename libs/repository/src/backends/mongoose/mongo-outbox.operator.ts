import type { mongo } from 'mongoose';
import { checkPositiveInteger, checkText, checkTime } from '../../outbox/outbox-arguments.js';
import type { OutboxDeadLetterQuery, OutboxRecord } from '../../outbox/outbox.interfaces.js';
import type { OutboxCollections } from './mongo-outbox.collections.js';
import { changeDocument, checkIds, deadLettersIn } from './mongo-outbox.documents.js';
import { OUTBOX, OUTBOX_DEAD, toRecord, type OutboxDocument } from './mongo-outbox.records.js';

// The operator's side of MongoOutboxStore: dead letters listed and replayed. Both read the
// documents that have dead letters (the sparse index on `_outboxDead`), not the collection.

/** Dead letters oldest first (then by event id), of one aggregate when asked, a page after `query.after`. */
export async function listDeadLetters(
  collections: OutboxCollections,
  query: OutboxDeadLetterQuery,
): Promise<OutboxRecord[]> {
  if (query === null || typeof query !== 'object')
    throw new TypeError('outbox: listDeadLetters takes { limit?, aggregate?, after? }');
  const limit = query.limit === undefined ? 100 : checkPositiveInteger(query.limit, 'limit');
  if (query.aggregate !== undefined) checkText(query.aggregate, 'aggregate');
  if (query.after !== undefined) checkIds([query.after]);
  await collections.resolveSources();
  const letters = (await deadLettersIn(collections.list)).filter(
    ({ entry }) => query.aggregate === undefined || entry.event.aggregate === query.aggregate,
  );
  letters.sort(
    (a, b) =>
      a.entry.deadAt! - b.entry.deadAt! ||
      (a.entry.eventId < b.entry.eventId ? -1 : a.entry.eventId > b.entry.eventId ? 1 : 0),
  );
  let from = 0;
  if (query.after !== undefined) {
    const at = letters.findIndex(({ entry }) => entry.eventId === query.after);
    from = at === -1 ? letters.length : at + 1;
  }
  return letters.slice(from, from + limit).map(({ entry, id }) => toRecord(entry, id));
}

/** Makes these dead letters pending again (attempts from 0, due at `now`); resolves how many. */
export async function replayDeadLetters(
  collections: OutboxCollections,
  eventIds: readonly string[],
  now: number,
): Promise<number> {
  checkIds(eventIds);
  checkTime(now, 'now');
  const wanted = new Set(eventIds);
  let replayed = 0;
  await collections.resolveSources();
  for (const collection of collections.list) {
    const documents = await collection.find({ [OUTBOX_DEAD]: { $gt: 0 } } as mongo.Filter<OutboxDocument>).toArray();
    for (const document of documents) {
      if (!Object.values(document[OUTBOX] ?? {}).some((entry) => entry.deadAt !== null && wanted.has(entry.eventId)))
        continue;
      const count = await changeDocument(collection, document, async (_c, current) => {
        const outbox = { ...(current[OUTBOX] ?? {}) };
        let n = 0;
        for (const id of wanted) {
          const entry = outbox[id];
          if (entry === undefined || entry.deadAt === null) continue;
          outbox[id] = {
            ...entry,
            attempts: 0,
            nextAttemptAt: now,
            owner: null,
            leaseUntil: 0,
            deadAt: null,
            lastError: null,
          };
          n++;
        }
        return { outbox, result: n };
      });
      if (count !== null) replayed += count;
    }
  }
  return replayed;
}
