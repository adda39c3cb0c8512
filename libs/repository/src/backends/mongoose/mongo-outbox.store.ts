import type { mongo } from 'mongoose';
import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import { RepositoryConfigurationError } from '../../errors.js';
import type {
  OutboxClaim,
  OutboxClaimRequest,
  OutboxDeadLetterFilter,
  OutboxDeadLetterQuery,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from '../../outbox/outbox.interfaces.js';
import { checkOwner, checkPositiveInteger, checkText, checkTime, errorText } from '../../outbox/outbox-arguments.js';
import { OutboxCollections } from './mongo-outbox.collections.js';
import {
  changeDocument,
  changeDocumentsHolding,
  checkIds,
  claimDocument,
  countOutbox,
  type Change,
  type OutboxCollection,
} from './mongo-outbox.documents.js';
import { listDeadLetters, purgeDeadLetters, requeueDeadLetters } from './mongo-outbox.operator.js';
import { OUTBOX, OUTBOX_NEXT, type OutboxDocument } from './mongo-outbox.records.js';

export interface MongoOutboxStoreOptions {
  /**
   * The collections whose documents carry outboxes (e.g. `connection.collection('user')`).
   * A MongooseRepository given this store as its `outbox` adds its own collection when it
   * first touches it; list the collections here when this process relays events of
   * repositories it may not use itself.
   */
  collections?: ReadonlyArray<mongo.Collection<any>>;
}

/**
 * The OutboxStore of MongooseRepositories with `outbox: true`: pending events live inside the
 * aggregate's own document (see mongo-outbox.records.ts), written by the same single-document
 * write as the aggregate, so no multi-document transaction is needed and a standalone server
 * will do.
 *
 * Every change the store makes to a document is a compare-and-set on its `_outboxRev`
 * (an `updateOne` filtered by the revision it read): a claim takes an instance
 * only if nothing changed it since it was read, so two relays never both get it, and no change
 * ever overwrites events a concurrent write added. Only `$set`/`$unset`/`$inc` are used.
 *
 * Costs: `claim`, `status`, `release` without ids and an `ack` of events this instance did not
 * claim read the documents that have pending events (a sparse index on `_outboxNext`,
 * `ensureIndexes()`); dead-letter operations read the documents that have dead letters (a
 * sparse index on `_outboxDead`). Both are the backlog, not the collection. MongoDB's TTL
 * monitor is not used (the emulator the tests run on has none): nothing expires by itself.
 */
export class MongoOutboxStore implements OutboxStore {
  /** Where the events live (see OutboxCollections). */
  private readonly collections = new OutboxCollections();
  /** Where the events this store handed out live, so ack/fail/release go straight to the document. */
  private readonly located = new Map<string, { collection: OutboxCollection; id: AggregateId }>();

  constructor(options: MongoOutboxStoreOptions = {}) {
    const collections = options?.collections ?? [];
    if (!Array.isArray(collections) || collections.some((c) => typeof c?.updateOne !== 'function')) {
      throw new RepositoryConfigurationError(
        'MongoOutboxStore: collections must be driver collections (connection.collection(name))',
      );
    }
    // Checked above; no indexes are asked for yet, so nothing here is asynchronous.
    for (const collection of collections) this.collections.register(collection as OutboxCollection);
  }

  /**
   * Adds a collection whose documents carry outboxes (the same namespace twice counts once);
   * MongooseRepository calls it for its own collection. Resolves once its indexes exist.
   */
  addCollection(collection: mongo.Collection<any>): Promise<void> {
    return this.collections.add(collection);
  }

  /**
   * Adds a collection by how to get it, resolved when the store next needs its collections
   * (MongooseRepository registers itself so, when it is given this store as its `outbox`: a
   * process that only relays still claims from every repository it configured).
   */
  addSource(resolve: () => Promise<mongo.Collection<any>>): void {
    this.collections.addSource(resolve);
  }

  /** The namespaces (`db.collection`) this store claims from. */
  get namespaces(): string[] {
    return this.collections.list.map((c) => c.namespace);
  }

  /**
   * Creates, on every collection (and on those added later), the sparse indexes that keep
   * claims, status and dead-letter reads proportional to the backlog.
   */
  ensureIndexes(): Promise<void> {
    return this.collections.ensureIndexes();
  }

  // ---------------------------------------------------------------- relay side

  async claim(request: OutboxClaimRequest): Promise<OutboxClaim[]> {
    if (request === null || typeof request !== 'object')
      throw new TypeError('outbox: claim needs { owner, limit, leaseMs, now }');
    const owner = checkOwner(request.owner);
    const limit = checkPositiveInteger(request.limit, 'limit');
    const leaseMs = checkPositiveInteger(request.leaseMs, 'leaseMs');
    const now = checkTime(request.now, 'now');
    const leaseUntil = now + leaseMs;
    const claims: OutboxClaim[] = [];
    await this.collections.resolveSources();
    const collections = this.collections.list;
    if (collections.length === 0) return claims;
    const start = this.collections.claimStart();
    for (let i = 0; i < collections.length && claims.length < limit; i++) {
      const collection = collections[(start + i) % collections.length];
      await this.claimIn(collection, owner, limit - claims.length, now, leaseUntil, claims);
    }
    return claims;
  }

  private async claimIn(
    collection: OutboxCollection,
    owner: string,
    limit: number,
    now: number,
    leaseUntil: number,
    claims: OutboxClaim[],
  ): Promise<void> {
    const seen: AggregateId[] = [];
    for (;;) {
      const filter: Record<string, unknown> = { [OUTBOX_NEXT]: { $lte: now } };
      if (seen.length > 0) filter._id = { $nin: seen };
      const candidates = await collection
        .find(filter, { sort: { [OUTBOX_NEXT]: 1 }, limit: Math.max(limit * 2, 16) })
        .toArray();
      if (candidates.length === 0) return;
      for (const candidate of candidates) {
        seen.push(candidate._id);
        const claim = await claimDocument(collection, candidate, owner, now, leaseUntil);
        if (claim !== null) {
          for (const record of claim.events) this.located.set(record.eventId, { collection, id: candidate._id });
          claims.push(claim);
          if (claims.length >= limit) return;
        }
      }
    }
  }

  async ack(owner: string, eventIds: readonly string[]): Promise<number> {
    checkOwner(owner);
    checkIds(eventIds);
    const wanted = new Set(eventIds);
    let removed = 0;
    await this.collections.resolveSources();
    await this.forDocumentsHolding(
      eventIds,
      owner,
      async (collection, document) => {
        const outbox = { ...(document[OUTBOX] ?? {}) };
        let count = 0;
        for (const id of wanted) {
          const entry = outbox[id];
          if (entry !== undefined && entry.deadAt === null && entry.owner === owner) {
            delete outbox[id];
            count++;
          }
        }
        return { outbox, result: count };
      },
      (count) => (removed += count),
    );
    for (const id of eventIds) this.located.delete(id);
    return removed;
  }

  async fail(owner: string, eventId: string, failure: OutboxFailure): Promise<OutboxFailureOutcome | null> {
    checkOwner(owner);
    checkIds([eventId]);
    if (failure === null || typeof failure !== 'object')
      throw new TypeError('outbox: fail needs { error, retryAt, maxAttempts, now }');
    checkTime(failure.retryAt, 'retryAt');
    checkTime(failure.now, 'now');
    checkPositiveInteger(failure.maxAttempts, 'maxAttempts');
    const error = typeof failure.error === 'string' ? checkText(failure.error, 'error') : errorText(failure.error);
    let outcome: OutboxFailureOutcome | null = null;
    await this.collections.resolveSources();
    await this.forDocumentsHolding(
      [eventId],
      owner,
      async (_collection, document) => {
        const outbox = { ...(document[OUTBOX] ?? {}) };
        const entry = outbox[eventId];
        if (entry === undefined || entry.deadAt !== null || entry.owner !== owner) return null;
        const attempts = entry.attempts + 1;
        const dead = attempts >= failure.maxAttempts;
        outbox[eventId] = {
          ...entry,
          attempts,
          lastError: error,
          deadAt: dead ? failure.now : null,
          nextAttemptAt: dead ? entry.nextAttemptAt : failure.retryAt,
        };
        // The relay stops at an instance's first failure: every lease it holds there ends.
        for (const [id, other] of Object.entries(outbox)) {
          if (other.owner === owner) outbox[id] = { ...other, owner: null, leaseUntil: 0 };
        }
        return { outbox, result: { attempts, dead, nextAttemptAt: dead ? null : failure.retryAt } };
      },
      (result) => (outcome = result),
    );
    this.located.delete(eventId);
    return outcome;
  }

  async renew(owner: string, eventIds: readonly string[], leaseUntil: number): Promise<number> {
    checkOwner(owner);
    checkIds(eventIds);
    checkTime(leaseUntil, 'leaseUntil');
    const wanted = new Set(eventIds);
    let renewed = 0;
    await this.collections.resolveSources();
    await this.forDocumentsHolding(
      eventIds,
      owner,
      async (_collection, document) => {
        const outbox = { ...(document[OUTBOX] ?? {}) };
        let count = 0;
        for (const id of wanted) {
          const entry = outbox[id];
          if (entry === undefined || entry.deadAt !== null || entry.owner !== owner) continue;
          outbox[id] = { ...entry, leaseUntil };
          count++;
        }
        // Nothing of ours left here (taken over, acked): no write, the revision stays.
        return count === 0 ? null : { outbox, result: count };
      },
      (count) => (renewed += count),
    );
    return renewed;
  }

  async release(owner: string, eventIds?: readonly string[]): Promise<number> {
    checkOwner(owner);
    if (eventIds !== undefined) checkIds(eventIds);
    const only = eventIds === undefined ? undefined : new Set(eventIds);
    let released = 0;
    await this.collections.resolveSources();
    const change = async (_collection: OutboxCollection, document: OutboxDocument): Promise<Change<number>> => {
      const outbox = { ...(document[OUTBOX] ?? {}) };
      let count = 0;
      for (const [id, entry] of Object.entries(outbox)) {
        if (entry.owner === owner && entry.deadAt === null && (only === undefined || only.has(id))) {
          outbox[id] = { ...entry, owner: null, leaseUntil: 0 };
          count++;
        }
      }
      return { outbox, result: count };
    };
    if (eventIds !== undefined) {
      await this.forDocumentsHolding(eventIds, owner, change, (count) => (released += count));
      for (const id of eventIds) this.located.delete(id);
    } else {
      for (const collection of this.collections.list) {
        const documents = await collection
          .find({ [OUTBOX_NEXT]: { $exists: true } } as mongo.Filter<OutboxDocument>)
          .toArray();
        for (const document of documents) {
          if (!Object.values(document[OUTBOX] ?? {}).some((entry) => entry.owner === owner)) continue;
          const count = await changeDocument(collection, document, change);
          if (count !== null) released += count;
        }
      }
      this.located.clear();
    }
    return released;
  }

  // ---------------------------------------------------------------- operator side

  async status(now: number): Promise<OutboxStatus> {
    checkTime(now, 'now');
    await this.collections.resolveSources();
    return countOutbox(this.collections.list, now);
  }

  listDeadLetters(query: OutboxDeadLetterQuery = {}): Promise<OutboxRecord[]> {
    return listDeadLetters(this.collections, query);
  }

  requeueDeadLetters(filter: OutboxDeadLetterFilter, now: number): Promise<number> {
    return requeueDeadLetters(this.collections, filter, now);
  }

  purgeDeadLetters(filter: OutboxDeadLetterFilter): Promise<number> {
    return purgeDeadLetters(this.collections, filter);
  }

  replayDeadLetters(eventIds: readonly string[], now: number): Promise<number> {
    return this.requeueDeadLetters({ eventIds }, now);
  }

  // ---------------------------------------------------------------- internals

  /** `change` on every document holding one of `eventIds` leased to `owner` (see changeDocumentsHolding). */
  private forDocumentsHolding<R>(
    eventIds: readonly string[],
    owner: string,
    change: (collection: OutboxCollection, document: OutboxDocument) => Promise<Change<R> | null>,
    collect: (result: R) => void,
  ): Promise<void> {
    return changeDocumentsHolding(this.collections.list, this.located, eventIds, owner, change, collect);
  }
}
