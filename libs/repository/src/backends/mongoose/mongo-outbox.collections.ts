import type { mongo } from 'mongoose';
import { RepositoryConfigurationError } from '../../errors.js';
import type { OutboxCollection } from './mongo-outbox.documents.js';
import { OUTBOX_DEAD, OUTBOX_NEXT } from './mongo-outbox.records.js';

/**
 * The collections whose documents carry a MongoOutboxStore's events: given to it, added by a
 * repository, or known by how to get them (resolved when the store next needs them); each with
 * the sparse indexes that keep the store's reads proportional to the backlog, once asked for.
 */
export class OutboxCollections {
  /** Every collection, one per namespace, in the order added. */
  readonly list: OutboxCollection[] = [];
  /** Collections known by how to get them (a repository's, before its connection is open). */
  private sources: Array<() => Promise<mongo.Collection<any>>> = [];
  /** The namespaces indexed so far; undefined until ensureIndexes was asked for. */
  private indexed?: Set<string>;
  private nextStart = 0;

  /** Adds a collection already checked to be a driver collection; the same namespace twice counts once. */
  register(collection: OutboxCollection): void {
    if (!this.list.some((c) => c.namespace === collection.namespace)) this.list.push(collection);
  }

  /** See MongoOutboxStore.addCollection. */
  async add(collection: mongo.Collection<any>): Promise<void> {
    if (typeof collection?.updateOne !== 'function')
      throw new RepositoryConfigurationError('MongoOutboxStore: not a driver collection');
    this.register(collection as OutboxCollection);
    if (this.indexed !== undefined) await this.ensureIndexesOn(collection as OutboxCollection);
  }

  /** See MongoOutboxStore.addSource. */
  addSource(resolve: () => Promise<mongo.Collection<any>>): void {
    if (typeof resolve !== 'function')
      throw new RepositoryConfigurationError('MongoOutboxStore.addSource takes a function resolving a collection');
    this.sources.push(resolve);
  }

  /** Resolves the sources added since the last call; a source that cannot resolve fails the operation and is tried again next time. */
  async resolveSources(): Promise<void> {
    while (this.sources.length > 0) {
      const collection = await this.sources[0]();
      this.sources.shift();
      await this.add(collection);
    }
  }

  /** Where the next claim starts: round-robin, so one busy aggregate type does not starve the others. */
  claimStart(): number {
    return this.nextStart++ % this.list.length;
  }

  /** See MongoOutboxStore.ensureIndexes. */
  async ensureIndexes(): Promise<void> {
    this.indexed ??= new Set();
    await this.resolveSources();
    for (const collection of this.list) await this.ensureIndexesOn(collection);
  }

  private async ensureIndexesOn(collection: OutboxCollection): Promise<void> {
    if (this.indexed === undefined || this.indexed.has(collection.namespace)) return;
    await collection.createIndex({ [OUTBOX_NEXT]: 1 }, { sparse: true, name: 'ddd_kit_outbox_next' });
    await collection.createIndex({ [OUTBOX_DEAD]: 1 }, { sparse: true, name: 'ddd_kit_outbox_dead' });
    this.indexed.add(collection.namespace);
  }
}
