import { Logger } from '@nestjs/common';
import type { Connection } from 'mongoose';
import type { RepositoryFeature } from '../../interfaces/repository-feature.interface.js';
import type { AnyRepository, RepositoryBackend } from '../repository-backend.interface.js';
import type { MongooseBackendOptions } from './mongoose.backend-options.js';
import { MongoOutboxStore } from './mongo-outbox.store.js';
import { MongooseRepository } from './mongoose.repository.js';

/** How long an operation of a connection the module opens waits for a server to answer (unless set). */
const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 5_000;

const logger = new Logger('RepositoryModule');

/** Mongoose's readyState of an open connection. */
const CONNECTED = 1;

/**
 * MongoDB through Mongoose, from RepositoryModule's `uri` (a connection the module opens at
 * bootstrap and closes at shutdown) or `connection` (yours, left open). It gives every
 * MongooseRepository the connection and forFeature's `collection`; with the outbox on, one
 * MongoOutboxStore that claims from the collections of the repositories it configured.
 */
export class MongooseBackend implements RepositoryBackend {
  readonly name = 'mongodb';
  private connection: Connection | undefined;
  private owned = false;

  constructor(private readonly options: MongooseBackendOptions) {
    this.connection = options.connection;
  }

  async connect(): Promise<void> {
    if (this.connection !== undefined || this.options.uri === undefined) return;
    // Loaded only here: users of the other backends need not install mongoose.
    const { default: mongoose } = await import('mongoose');
    // A server that does not answer fails an operation after 5 s rather than the driver's 30 s,
    // unless the options say otherwise; while it is away, operations fail and the driver
    // reconnects by itself (an outage, not a crash).
    const connection = mongoose.createConnection(this.options.uri, {
      serverSelectionTimeoutMS: DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
      ...this.options.connectionOptions,
    });
    try {
      await connection.asPromise();
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
    // After the start-up (whose failure is the bootstrap's error): a later one is logged, not thrown.
    connection.on('error', (error: Error) => logger.warn(`MongoDB: ${error.message}`));
    this.connection = connection;
    this.owned = true;
  }

  async close(): Promise<void> {
    if (this.owned) await this.connection?.close();
  }

  owns(repository: AnyRepository): boolean {
    return repository instanceof MongooseRepository;
  }

  configure(repository: AnyRepository, feature: RepositoryFeature): void {
    (repository as MongooseRepository<any, any>).configure({
      connection: this.connection,
      collection: feature.collection,
    });
  }

  async createOutboxStore(): Promise<MongoOutboxStore> {
    const store = new MongoOutboxStore();
    // No collection yet: this only turns indexing on, so each collection a repository adds
    // (when it is configured, before the relay starts) gets its indexes.
    await store.ensureIndexes();
    return store;
  }

  /** The `ping` command; a connection that is not open fails at once (mongoose would wait for it). */
  async ping(): Promise<void> {
    const connection = this.connection;
    const db = connection?.db;
    if (connection === undefined || connection.readyState !== CONNECTED || db === undefined) {
      throw new Error(`the connection is not open (mongoose readyState ${connection?.readyState})`);
    }
    await db.command({ ping: 1 });
  }
}
