import { Inject, Injectable, Optional, type Type } from '@nestjs/common';
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
import type { RepositoryConnectionHandle, RepositoryPostgresHandle } from './repository.providers.js';
import { REPOSITORY_CONNECTION, REPOSITORY_POSTGRES } from './repository.constants.js';

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
    @Inject(REPOSITORY_POSTGRES) private readonly postgres: RepositoryPostgresHandle,
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
    const instance = Promise.resolve(create()).then((repository) => this.configure(repository, feature));
    this.byAggregate.set(feature.aggregate, { source, instance });
    return instance;
  }

  /** A ready-made in-memory repository. */
  inMemory(feature: RepositoryFeature): Promise<AnyRepository> {
    return this.provide(feature, () => new InMemoryRepository());
  }

  private configure(repository: AnyRepository, feature: RepositoryFeature): AnyRepository {
    const name = (feature.repository as Type | undefined)?.name ?? 'InMemoryRepository';
    if (!(repository instanceof AbstractRepository)) {
      throw new RepositoryConfigurationError(`${name} must extend AbstractRepository (MongooseRepository, PostgresRepository, InMemoryRepository).`);
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
    repository[CONFIGURE_REPOSITORY]({
      aggregate: feature.aggregate,
      publisher: this.bus,
      idGenerators: this.idGenerators ?? null,
      connection: this.connection.connection ?? undefined,
      collection: feature.collection,
      pool: this.postgres.pool ?? undefined,
      table: feature.table,
      createTable: this.postgres.createTables,
    } as MongooseRepositoryOptions<AggregateRoot<any, any>> & PostgresRepositoryOptions<AggregateRoot<any, any>>);
    // Checks the table and column declaration now, so a bad one fails the bootstrap.
    if (repository instanceof PostgresRepository) repository.createTableStatement();
    return repository;
  }
}
