import type { FactoryProvider, InjectionToken, OptionalFactoryDependency, Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PREPARE_KEY_LOOKUP, type PrepareKeyLookup } from '@ddd-kit/core/internal';
import { AggregateRoot } from './aggregate/aggregate-root.js';
import { RepositoryConfigurationError } from './errors.js';
import type { RepositoryFeature } from './interfaces/repository-feature.interface.js';
import { AbstractRepository } from './repository/abstract-repository.js';
import { RepositoryBinder } from './repository.binder.js';
import { getRepositoryToken } from './repository.utils.js';
import { classesTaking, takesFeatureOption } from './storages/feature-option.storage.js';
import { getUniqueKeys } from './unique-keys/unique-key.decorator.js';
import type { UniqueKeyReservations } from './unique-keys/unique-key.interfaces.js';

/** The keys of a forFeature entry every repository takes; the others belong to a backend's repository class. */
const COMMON_KEYS = new Set(['aggregate', 'repository']);

/** Checks forFeature entries where they are declared and turns the shorthand into features. */
export function normalizeFeatures(entries: ReadonlyArray<Function | RepositoryFeature>): RepositoryFeature[] {
  if (!Array.isArray(entries))
    throw new RepositoryConfigurationError(
      'RepositoryModule.forFeature expects an array of aggregate classes or { aggregate, repository? }',
    );
  return entries.map((entry, index) => {
    const feature = (typeof entry === 'function' ? { aggregate: entry } : entry) as RepositoryFeature;
    const at = `RepositoryModule.forFeature entry ${index}`;
    if (feature === null || typeof feature !== 'object')
      throw new RepositoryConfigurationError(
        `${at}: expected an aggregate class or { aggregate, repository? }, got ${String(entry)}`,
      );
    if (typeof feature.aggregate !== 'function' || !(feature.aggregate.prototype instanceof AggregateRoot)) {
      throw new RepositoryConfigurationError(
        `${at}: aggregate must be a class extending AggregateRoot, got ${String(feature.aggregate)} (a circular import?)`,
      );
    }
    if (
      feature.repository !== undefined &&
      (typeof feature.repository !== 'function' || !(feature.repository.prototype instanceof AbstractRepository))
    ) {
      throw new RepositoryConfigurationError(
        `${at} (${feature.aggregate.name}): repository must be a class extending AbstractRepository ` +
          "(directly, or through a backend's repository class)",
      );
    }
    // An option a backend's repository class takes (collection, table) needs such a class.
    for (const [option, value] of Object.entries(feature)) {
      if (COMMON_KEYS.has(option) || value === undefined || takesFeatureOption(feature.repository, option)) continue;
      const takers = classesTaking(option);
      if (takers.length > 0)
        throw new RepositoryConfigurationError(
          `${at} (${feature.aggregate.name}): ${option} needs a ${takers.join(' or ')} class in repository`,
        );
    }
    return feature;
  });
}

/**
 * The providers of one forFeature entry: the repository token, and its class when it has one.
 * An aggregate with `@UniqueKey`s injects PrepareKeyModule's keys too: declared so, the
 * repository is built only once they exist, whatever order or speed the stores connect in.
 */
export function createRepositoryProviders(feature: RepositoryFeature): Provider[] {
  const token = getRepositoryToken(feature.aggregate);
  const repositoryClass = feature.repository;
  // Optional, so that a missing forRoot (or PrepareKeyModule) is our error naming the step, not Nest's about an internal token.
  const inject: Array<InjectionToken | OptionalFactoryDependency> = [{ token: RepositoryBinder, optional: true }];
  if (getUniqueKeys(feature.aggregate).length > 0) inject.push({ token: PREPARE_KEY_LOOKUP, optional: true });
  if (repositoryClass === undefined) {
    return [
      {
        provide: token,
        inject,
        useFactory: (binder?: RepositoryBinder, reservations?: PrepareKeyLookup<UniqueKeyReservations>) =>
          binderOrFail(binder, feature).provide(feature, undefined, reservations),
      } satisfies FactoryProvider,
    ];
  }
  return [
    {
      provide: repositoryClass,
      inject: [...inject, ModuleRef],
      // ModuleRef.create builds the class with Nest's injection (its own dependencies work),
      // and the binder configures it before any other provider can receive it.
      useFactory: (binder: RepositoryBinder | undefined, ...rest: unknown[]) => {
        const moduleRef = rest.pop() as ModuleRef;
        return binderOrFail(binder, feature).provide(
          feature,
          () => moduleRef.create(repositoryClass),
          rest[0] as PrepareKeyLookup<UniqueKeyReservations> | undefined,
        );
      },
    } satisfies FactoryProvider,
    { provide: token, useExisting: repositoryClass },
  ];
}

function binderOrFail(binder: RepositoryBinder | undefined, feature: RepositoryFeature): RepositoryBinder {
  if (binder !== undefined) return binder;
  throw new RepositoryConfigurationError(
    `RepositoryModule.forFeature([${feature.aggregate.name}]) needs RepositoryModule.forRoot() (or forRootAsync) imported once, ` +
      `in the root module: forRoot() for in-memory repositories, forRoot({ uri }) for MongoDB, forRoot({ postgres: { url } }) for PostgreSQL.`,
  );
}
