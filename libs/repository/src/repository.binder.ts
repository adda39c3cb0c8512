import { Inject, Injectable, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PREPARE_KEY_LOOKUP, type PrepareKeyLookup } from '@ddd-kit/core/internal';
import { AggregateIdGeneratorRegistrar } from '@ddd-kit/id-generator';
import type { AggregateClass } from './aggregate/aggregate-root.js';
import type { AnyRepository, RepositoryBackend } from './backends/repository-backend.interface.js';
import { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
import { RepositoryConfigurationError } from './errors.js';
import type { RepositoryFeature } from './interfaces/repository-feature.interface.js';
import type { OutboxStore } from './outbox/outbox.interfaces.js';
import { AbstractRepository } from './repository/abstract-repository.js';
import { REPOSITORY_BACKENDS, REPOSITORY_OUTBOX_STORES } from './repository.constants.js';
import { restoreUniqueKeys } from './unique-keys/reconcile-unique-keys.js';
import { getUniqueKeys } from './unique-keys/unique-key.decorator.js';
import type { UniqueKeyReservations, UniqueKeyResolver } from './unique-keys/unique-key.interfaces.js';

/**
 * Gives each registered repository what it needs before anyone can use it — what every
 * repository gets (aggregate, publisher, ID generators, unique keys, outbox store) from the
 * module, the rest from the backend that owns it — and keeps one instance per aggregate for the
 * whole application: two modules importing forFeature for one aggregate share its repository
 * (an in-memory store split in two would be two truths).
 */
@Injectable()
export class RepositoryBinder {
  private readonly byAggregate = new Map<AggregateClass, { source: string; instance: Promise<AnyRepository> }>();

  constructor(
    private readonly bus: DataSyncEventBus,
    private readonly moduleRef: ModuleRef,
    @Inject(REPOSITORY_BACKENDS) private readonly backends: readonly RepositoryBackend[],
    @Inject(REPOSITORY_OUTBOX_STORES) private readonly outboxStores: ReadonlyMap<RepositoryBackend, OutboxStore> | null,
    // Present when IdGeneratorModule.forRoot is imported (it is global); insert then fills empty IDs.
    @Optional() private readonly idGenerators?: AggregateIdGeneratorRegistrar,
  ) {}

  /**
   * The repository of `feature`, created the first time — by `create` (Nest building the class)
   * or, without one, as the ready-made repository of the first backend that offers one — and
   * configured. `reservations` is what forFeature injected for the aggregate's `@UniqueKey`s.
   */
  provide(
    feature: RepositoryFeature,
    create: (() => Promise<AnyRepository> | AnyRepository) | undefined,
    reservations?: PrepareKeyLookup<UniqueKeyReservations>,
  ): Promise<AnyRepository> {
    const readyMade = create === undefined ? this.readyMadeBackend(feature) : undefined;
    const source = feature.repository?.name ?? `the ready-made repository of the ${readyMade?.name} backend`;
    const known = this.byAggregate.get(feature.aggregate);
    if (known !== undefined) {
      if (known.source !== source) {
        throw new RepositoryConfigurationError(
          `${feature.aggregate.name} is registered with two repositories (${known.source} and ${source}); register one.`,
        );
      }
      return known.instance;
    }
    const instance = Promise.resolve(create?.() ?? readyMade!.createRepository!(feature)).then(async (repository) => {
      const lookup = this.reservationsFor(feature, reservations);
      const configured = await this.configure(repository, feature, lookup && this.resolverOf(feature, lookup));
      if (lookup !== undefined) this.registerRestorers(configured, feature, lookup);
      return configured;
    });
    this.byAggregate.set(feature.aggregate, { source, instance });
    return instance;
  }

  private readyMadeBackend(feature: RepositoryFeature): RepositoryBackend {
    const backend = this.backends.find((candidate) => typeof candidate.createRepository === 'function');
    if (backend === undefined) {
      throw new RepositoryConfigurationError(
        `RepositoryModule.forFeature([${feature.aggregate.name}]) names no repository class, and no backend offers a ready-made one: ` +
          'give the entry a repository ({ aggregate, repository }).',
      );
    }
    return backend;
  }

  /**
   * Where the reservations of the aggregate's @UniqueKeys come from: the PrepareKeys of
   * PrepareKeyModule (the injected object of a declared key class, or the backend's key of a
   * bare name), which forFeature injected — so the repository waits for them, however long the
   * PrepareKey backend takes to connect.
   */
  private reservationsFor(
    feature: RepositoryFeature,
    injected?: PrepareKeyLookup<UniqueKeyReservations>,
  ): PrepareKeyLookup<UniqueKeyReservations> | undefined {
    const definitions = getUniqueKeys(feature.aggregate);
    if (definitions.length === 0) return undefined;
    // A PrepareKeyModule that is not global is not visible to forFeature; once resolved, it can be found.
    const reservations = injected ?? this.findReservations();
    if (reservations === undefined) {
      throw new RepositoryConfigurationError(
        `${feature.aggregate.name} declares @UniqueKey(${definitions.map((d) => `'${d.name}'`).join(', ')}): import ` +
          'PrepareKeyModule.forRoot({ factory }) from @ddd-kit/prepare-key in the application (RepositoryModule takes the reservations ' +
          "from it; when it is not global, list it in forFeature's imports).",
      );
    }
    for (const definition of definitions) reservations.forName(definition.name); // a missing factory fails now, at bootstrap
    return reservations;
  }

  private resolverOf(
    feature: RepositoryFeature,
    reservations: PrepareKeyLookup<UniqueKeyReservations>,
  ): UniqueKeyResolver {
    return (name) => reservations.forName(name) as ReturnType<UniqueKeyResolver>;
  }

  /**
   * A store of reservations that lost its data (a Redis without persistence, wiped) is filled
   * again from the aggregates before it answers: PrepareKeyModule runs, for each `@UniqueKey`,
   * this repository's restore of that key (restoreUniqueKeys), with nobody to call it by hand.
   */
  private registerRestorers(
    repository: AnyRepository,
    feature: RepositoryFeature,
    reservations: PrepareKeyLookup<UniqueKeyReservations>,
  ): void {
    if (typeof reservations.restoreWith !== 'function') return;
    for (const { name } of getUniqueKeys(feature.aggregate)) {
      reservations.restoreWith(name, (target) =>
        restoreUniqueKeys(repository as AbstractRepository<any, any>, name, target),
      );
    }
  }

  private findReservations(): PrepareKeyLookup<UniqueKeyReservations> | undefined {
    try {
      const found = this.moduleRef.get<PrepareKeyLookup<UniqueKeyReservations>>(PREPARE_KEY_LOOKUP, { strict: false });
      return typeof found?.forName === 'function' ? found : undefined;
    } catch {
      return undefined; // no PrepareKeyModule
    }
  }

  private async configure(
    repository: AnyRepository,
    feature: RepositoryFeature,
    uniqueKeys: UniqueKeyResolver | undefined,
  ): Promise<AnyRepository> {
    const name = feature.repository?.name ?? repository?.constructor?.name ?? String(repository);
    if (!(repository instanceof AbstractRepository)) {
      throw new RepositoryConfigurationError(
        `${name} must extend AbstractRepository (directly, or through a backend's repository class).`,
      );
    }
    const backend = this.backends.find((candidate) => candidate.owns(repository));
    const outbox = this.outboxFor(backend, name);
    repository.configure({
      aggregate: feature.aggregate,
      publisher: this.bus,
      idGenerators: this.idGenerators ?? null,
      ...(uniqueKeys === undefined ? {} : { uniqueKeys }),
      ...(outbox === undefined ? {} : { outbox }),
    });
    await backend?.configure(repository, feature, { name, ...(outbox === undefined ? {} : { outbox }) });
    // A bad declaration, or what the repository still lacks, fails the bootstrap.
    repository.checkConfiguration();
    return repository;
  }

  /** The outbox store of the repository's backend when the outbox is on; without one, the bootstrap fails. */
  private outboxFor(backend: RepositoryBackend | undefined, name: string): OutboxStore | undefined {
    if (this.outboxStores === null) return undefined;
    const store = backend === undefined ? undefined : this.outboxStores.get(backend);
    if (store !== undefined) return store;
    throw new RepositoryConfigurationError(
      `${name}: the outbox is on (RepositoryModule.forRoot({ outbox })) but ` +
        (backend === undefined ? 'no backend of RepositoryModule owns it, so it' : `its backend (${backend.name})`) +
        ' has no outbox store, so its events could be lost; use a repository whose backend has one ' +
        '(memory, PostgreSQL, MongoDB, or one of yours with createOutboxStore) or turn the outbox off.',
    );
  }
}
