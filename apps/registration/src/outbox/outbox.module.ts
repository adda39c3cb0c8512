import { Global, Inject, Module, type BeforeApplicationShutdown, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { DataSyncEventBus, getAggregateName, MongoOutboxStore, OutboxRelay, type RepositoryOutboxOptions } from '@ddd-kit/repository';
import type { Connection } from 'mongoose';
import type { AppConfig } from '../config/app-config.js';
import { MONGO_CONNECTION } from '../infrastructure/infrastructure.constants.js';
import { User } from '../users/user.aggregate.js';
import { MONGO_OUTBOX, MONGO_OUTBOX_RELAY } from './outbox.constants.js';

/**
 * Durable data-sync events on a shared repository: each write stores its events with the user
 * (the outbox table in the same transaction on PostgreSQL, inside the user's document on
 * MongoDB) and a relay feeds the read model from there, at least once, so a crash between the
 * write and the projector delays an event and never loses it. In memory there is nothing
 * durable to gain: events are delivered in process, before the request answers.
 *
 * The lease: a claim of an instance killed mid-delivery is taken over after it (the projector
 * is one statement, far shorter). PostgreSQL wakes the relay on commit (LISTEN/NOTIFY);
 * MongoDB gives no such signal here, so the relay polls more often.
 */
export function outboxOptions(config: AppConfig): RepositoryOutboxOptions {
  return {
    relay: config.outboxRelay ?? true,
    leaseMs: 10_000,
    pollIntervalMs: config.repositoryBackend === 'mongo' ? 200 : 1_000,
  };
}

/**
 * The outbox around RepositoryModule's. On PostgreSQL, `RepositoryModule.forRoot({ outbox })`
 * keeps it all (see RegistrationModule). On MongoDB, RepositoryModule's outbox does not cover
 * MongooseRepository yet, so this module builds the MongoOutboxStore (given to
 * UserMongooseRepository) and its relay. The store is told the users' collection up front: a
 * relay that starts after a crash must find pending events before any request touches it.
 *
 * Relays stop before any connection closes (`beforeApplicationShutdown`), so what they hold is
 * finished or released rather than left to its lease.
 */
@Global()
@Module({})
export class OutboxModule implements OnModuleInit, BeforeApplicationShutdown {
  constructor(
    @Inject(MONGO_OUTBOX) private readonly mongoStore: MongoOutboxStore | null,
    @Inject(MONGO_OUTBOX_RELAY) private readonly mongoRelay: OutboxRelay | null,
    @Inject(OutboxRelay) private readonly repositoryRelay: OutboxRelay | null,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    const { relay, table: _table, notifyChannel: _channel, ...settings } = outboxOptions(config);
    return {
      module: OutboxModule,
      providers: [
        {
          provide: MONGO_OUTBOX,
          inject: [MONGO_CONNECTION],
          useFactory: (connection: Connection | null) =>
            config.repositoryBackend === 'mongo' && connection ? new MongoOutboxStore({ collections: [connection.db!.collection(getAggregateName(User))] }) : null,
        },
        {
          provide: MONGO_OUTBOX_RELAY,
          inject: [MONGO_OUTBOX, DataSyncEventBus],
          useFactory: (store: MongoOutboxStore | null, bus: DataSyncEventBus) =>
            store === null ? null : new OutboxRelay({ ...settings, stores: [store], deliver: (aggregate, events) => bus.deliver(aggregate, events), autoStart: relay }),
        },
      ],
      exports: [MONGO_OUTBOX, MONGO_OUTBOX_RELAY],
    };
  }

  async onModuleInit(): Promise<void> {
    await this.mongoStore?.ensureIndexes();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.mongoRelay?.stop(), this.repositoryRelay?.stop()]);
  }
}
