import type { mongo } from 'mongoose';
import {
  checkDeadLetterFilter,
  checkPositiveInteger,
  checkTime,
  matchesDeadLetterFilter,
  type CheckedDeadLetterFilter,
} from '../../outbox/outbox-arguments.js';
import type { OutboxDeadLetterFilter, OutboxDeadLetterQuery, OutboxRecord } from '../../outbox/outbox.interfaces.js';
import type { OutboxCollections } from './mongo-outbox.collections.js';
import { changeDocument, checkIds, deadLettersIn } from './mongo-outbox.documents.js';
import { OUTBOX, OUTBOX_DEAD, toRecord, type OutboxDocument, type OutboxEntry } from './mongo-outbox.records.js';

// The operator's side of MongoOutboxStore: dead letters listed, requeued and purged. Each reads
// the documents that have dead letters (the sparse index on `_outboxDead`), not the collection.

/** Dead letters matching the query's filter, oldest first (then by event id), a page after `query.after`. */
export async function listDeadLetters(
  collections: OutboxCollections,
  query: OutboxDeadLetterQuery,
): Promise<OutboxRecord[]> {
  // Filters are matched in code, never sent: any event id may be asked for.
  const filter = checkDeadLetterFilter(query);
  const limit = query.limit === undefined ? 100 : checkPositiveInteger(query.limit, 'limit');
  if (query.after !== undefined) checkIds([query.after]);
  await collections.resolveSources();
  const letters = (await deadLettersIn(collections.list)).filter(({ entry }) => matchesDeadLetterFilter(filter, entry));
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

/** Makes the dead letters matching `filter` pending again (attempts from 0, due at `now`); resolves how many. */
export async function requeueDeadLetters(
  collections: OutboxCollections,
  filter: OutboxDeadLetterFilter,
  now: number,
): Promise<number> {
  const checked = checkDeadLetterFilter(filter);
  checkTime(now, 'now');
  return changeDeadLetters(collections, checked, (entry) => ({
    ...entry,
    attempts: 0,
    nextAttemptAt: now,
    owner: null,
    leaseUntil: 0,
    deadAt: null,
    lastError: null,
  }));
}

/** Deletes the dead letters matching `filter` (a tombstone left with nothing goes too); resolves how many. */
export async function purgeDeadLetters(
  collections: OutboxCollections,
  filter: OutboxDeadLetterFilter,
): Promise<number> {
  return changeDeadLetters(collections, checkDeadLetterFilter(filter), () => undefined);
}

/**
 * Replaces each dead letter matching `filter` by what `change` makes of it (undefined: removed),
 * document by document, each a compare-and-set (see changeDocument). Resolves how many changed.
 */
async function changeDeadLetters(
  collections: OutboxCollections,
  filter: CheckedDeadLetterFilter,
  change: (entry: OutboxEntry) => OutboxEntry | undefined,
): Promise<number> {
  let changed = 0;
  await collections.resolveSources();
  for (const collection of collections.list) {
    const documents = await collection.find({ [OUTBOX_DEAD]: { $gt: 0 } } as mongo.Filter<OutboxDocument>).toArray();
    for (const document of documents) {
      const matches = (d: OutboxDocument) =>
        Object.values(d[OUTBOX] ?? {}).filter((entry) => matchesDeadLetterFilter(filter, entry));
      if (matches(document).length === 0) continue;
      const count = await changeDocument(collection, document, async (_c, current) => {
        const outbox = { ...(current[OUTBOX] ?? {}) };
        const found = matches(current);
        for (const entry of found) {
          const next = change(entry);
          if (next === undefined) delete outbox[entry.eventId];
          else outbox[entry.eventId] = next;
        }
        return found.length === 0 ? null : { outbox, result: found.length };
      });
      if (count !== null) changed += count;
    }
  }
  return changed;
}
