import { Inject, Injectable, Optional, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AggregateIdGeneratorRegistrar } from '@ddd-kit/id-generator';
import type { AggregateRoot } from './aggregate/aggregate-root.js';
import type { AggregateClass } from './aggregate/aggregate.interfaces.js';
import { InMemoryRepository } from './backends/memory/in-memory.repository.js';
import { MongooseRepository, type MongooseRepositoryOptions } from './backends/mongoose/mongoose.repository.js';
import { PostgresRepository, type PostgresRepositoryOptions } from './backends/postgres/postgres.repository.js';
import { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
import { RepositoryConfigurationError } from './errors/repository-configuration.error.js';
import type { RepositoryFeature } from './interfaces/repository-module-options.interface.js';
import { AbstractRepository, CONFIGURE_REPOSITORY } from './repository/abstract-repository.js';
import { getUniqueKeys } from './unique-keys/unique-key.decorator.js';
import type { UniqueKeyResolver } from './unique-keys/unique-key.interfaces.js';
import type {
  RepositoryConnectionHandle,
  RepositoryOutboxStores,
  RepositoryPostgresHandle,
} from './repository.providers.js';
import { REPOSITORY_CONNECTION, REPOSITORY_OUTBOX_STORES, REPOSITORY_POSTGRES } from './repository.constants.js';
import type { OutboxStore } from './outbox/outbox.interfaces.js';

type AnyRepository = AbstractRepository<any, AggregateRoot<any, any>>;

/**
 * Gives each registered repository what it needs from the module (publisher, ID generators,
 * Mongoose connection, pg.Pool) before anyone can use it, and keeps one instance per aggregate for the whole
 * application: two modules importing forFeature for one aggregate share its repository (an
 * in-memory store split in two would be two truths).
 */
@Injectable()
export class RepositoryBinder {
  private readonly byAggregate = new Map<AggregateClass, { source: string; instance: Promise<AnyRepository> }>();

  constructor(
    private readonly bus: DataSyncEventBus,
    @Inject(REPOSITORY_CONNECTION) private readonly connection: RepositoryConnectionHandle,
    private readonly moduleRef: ModuleRef,
    @Inject(REPOSITORY_POSTGRES) private readonly postgres: RepositoryPostgresHandle,
    @Inject(REPOSITORY_OUTBOX_STORES) private readonly outboxStores: RepositoryOutboxStores | null,
    // Present when IdGeneratorModule.forRoot is imported (it is global); insert then fills empty IDs.
    @Optional() private readonly idGenerators?: AggregateIdGeneratorRegistrar,
  ) {}

  /** The repository of `feature`, created by `create` the first time and configured. */
  provide(feature: RepositoryFeature, create: () => Promise<AnyRepository> | AnyRepository): Promise<AnyRepository> {
    const source = feature.repository?.name ?? 'the ready-made InMemoryRepository';
    const known = this.byAggregate.get(feature.aggregate);
    if (known !== undefined) {
      if (known.source !== source) {
        throw new RepositoryConfigurationError(
          `${feature.aggregate.name} is registered with two repositories (${known.source} and ${source}); register one.`,
        );
      }
      return known.instance;
    }
    const instance = Promise.resolve(create()).then(async (repository) =>
      this.configure(repository, feature, await this.uniqueKeysFor(feature)),
    );
    this.byAggregate.set(feature.aggregate, { source, instance });
    return instance;
  }

  /** A ready-made in-memory repository. */
  inMemory(feature: RepositoryFeature): Promise<AnyRepository> {
    return this.provide(feature, () => new InMemoryRepository());
  }

  /**
   * Where the reservations of the aggregate's @UniqueKeys come from: the PrepareKeys of
   * PrepareKeyModule (the injected object of a declared key class, or the backend's key of a
   * bare name). @ddd-kit/prepare-key is loaded only for aggregates that declare unique keys.
   */
  private async uniqueKeysFor(feature: RepositoryFeature): Promise<UniqueKeyResolver | undefined> {
    const definitions = getUniqueKeys(feature.aggregate);
    if (definitions.length === 0) return undefined;
    const names = definitions.map((d) => `'${d.name}'`).join(', ');
    let registry: { forName(name: string): unknown };
    try {
      const { PrepareKeyRegistry } = await import('@ddd-kit/prepare-key');
      registry = this.moduleRef.get(PrepareKeyRegistry, { strict: false });
    } catch (error) {
      throw new RepositoryConfigurationError(
        `${feature.aggregate.name} declares @UniqueKey(${names}): import PrepareKeyModule.forRoot({ factory }) from @ddd-kit/prepare-key ` +
          `in the application (RepositoryModule takes the reservations from it). (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    for (const definition of definitions) registry.forName(definition.name); // a missing factory fails now, at bootstrap
    return (name) => registry.forName(name) as ReturnType<UniqueKeyResolver>;
  }

  /** The outbox store of the repository's backend when the outbox is on (memory, PostgreSQL on the module's pool, MongoDB in the document). */
  private outboxFor(repository: AnyRepository, name: string): OutboxStore | undefined {
    const stores = this.outboxStores;
    if (stores === null) return undefined;
    if (repository instanceof InMemoryRepository) return stores.memory;
    if (repository instanceof PostgresRepository) {
      if (stores.postgres === undefined || (repository.hasPool && !repository.usesPool(stores.postgres.pool))) {
        throw new RepositoryConfigurationError(
          `${name}: the outbox is on, and a PostgresRepository stores its events in the outbox table of the module's pool; ` +
            "this one has a pool of its own. Give it the module's pool (RepositoryModule.forRoot({ postgres: { pool } })).",
        );
      }
      return stores.postgres;
    }
    if (repository instanceof MongooseRepository) {
      // The events stay in the repository's documents; the store (which the relay claims from)
      // learns the repository's collection when the repository is configured with it.
      if (stores.mongo === undefined) {
        throw new RepositoryConfigurationError(
          `${name}: the outbox is on, and a MongooseRepository's events are relayed by the module's MongoDB outbox store, ` +
            "which needs the module's connection: pass { uri } or { connection } to RepositoryModule.forRoot / forRootAsync.",
        );
      }
      return stores.mongo;
    }
    throw new RepositoryConfigurationError(
      `${name}: the outbox is on (RepositoryModule.forRoot({ outbox })) but its backend has no outbox store, so its events could be lost; ` +
        'use a repository whose backend has one (InMemoryRepository, PostgresRepository, MongooseRepository) or turn the outbox off.',
    );
  }

  private configure(
    repository: AnyRepository,
    feature: RepositoryFeature,
    uniqueKeys: UniqueKeyResolver | undefined,
  ): AnyRepository {
    const name = (feature.repository as Type | undefined)?.name ?? 'InMemoryRepository';
    if (!(repository instanceof AbstractRepository)) {
      throw new RepositoryConfigurationError(
        `${name} must extend AbstractRepository (MongooseRepository, PostgresRepository, InMemoryRepository).`,
      );
    }
    if (repository instanceof MongooseRepository && !repository.hasConnection && this.connection.connection === null) {
      throw new RepositoryConfigurationError(
        `${name} is a MongooseRepository but RepositoryModule has no connection: pass { uri } or { connection } ` +
          'to RepositoryModule.forRoot / forRootAsync.',
      );
    }
    if (repository instanceof PostgresRepository && !repository.hasPool && this.postgres.pool === null) {
      throw new RepositoryConfigurationError(
        `${name} is a PostgresRepository but RepositoryModule has no PostgreSQL pool: pass { postgres: { url } } or ` +
          '{ postgres: { pool } } to RepositoryModule.forRoot / forRootAsync.',
      );
    }
    const outbox = this.outboxFor(repository, name);
    repository[CONFIGURE_REPOSITORY]({
      ...(outbox === undefined ? {} : { outbox }),
      aggregate: feature.aggregate,
      publisher: this.bus,
      idGenerators: this.idGenerators ?? null,
      connection: this.connection.connection ?? undefined,
      collection: feature.collection,
      ...(uniqueKeys === undefined ? {} : { uniqueKeys }),
      pool: this.postgres.pool ?? undefined,
      table: feature.table,
      createTable: this.postgres.createTables,
    } as MongooseRepositoryOptions<AggregateRoot<any, any>> & PostgresRepositoryOptions<AggregateRoot<any, any>>);
    // Checks the table and column declaration now, so a bad one fails the bootstrap.
    if (repository instanceof PostgresRepository) repository.createTableStatement();
    return repository;
  }
}
