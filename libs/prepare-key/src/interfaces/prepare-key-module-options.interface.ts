import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Type } from '@nestjs/common';
import type { RedisConnectionOptions } from '@ddd-kit/core/redis';
import type { RedisPrepareKeyFactoryOptions } from '../backends/redis/redis-prepare-key.interfaces.js';
import type { PrepareKeyFactory } from '../prepare-key.factory.js';
import type { PrepareKeyClass, PreparableKeyDeclaration } from './preparable-key-declaration.interface.js';

/**
 * Selects decorated key classes for `include` / `exclude`:
 * - a class: that class;
 * - a string: a declared key name ('username') or a class simple name ('UsernamePrepareKey');
 * - a RegExp: tested against the key name and against the class name;
 * - a function `(declaration) => boolean`: called with `{ target, name }`.
 */
export type PreparableKeyMatcher =
  PrepareKeyClass | string | RegExp | ((declaration: PreparableKeyDeclaration) => boolean);

/** `redis: { url }`: where the module's own client connects, and the RedisPrepareKeyFactory options. */
export interface PrepareKeyRedisOptions extends RedisConnectionOptions, RedisPrepareKeyFactoryOptions {}

/** The backend settings; all that forRootAsync's factory may produce. */
export interface PrepareKeyBackendOptions {
  /**
   * The backend every key is created from: `new MemoryPrepareKeyFactory()`, `new RedisPrepareKeyFactory(redis)`, …
   * A client you hand a factory stays yours: close it in `onApplicationShutdown`.
   */
  factory?: PrepareKeyFactory;
  /**
   * Redis on a client the module owns (instead of `factory`): opened at start-up, which fails
   * with PrepareKeyConnectionError when Redis cannot be reached, and closed in the module's
   * `onApplicationShutdown`, after every `onModuleDestroy` that may still use a key.
   * `{ url: 'redis://localhost:6379', keyPrefix: 'shop:prepare:' }`.
   */
  redis?: PrepareKeyRedisOptions;
  /**
   * Default true. When false no backend is used (a factory is not required and never
   * called): declared keys stay injectable, so the application boots, but every operation
   * rejects with PrepareKeyDisabledError, which says why.
   */
  enabled?: boolean;
}

/** Which decorated classes forRoot makes injectable. Fixed when the module is built, before any factory runs. */
export interface PrepareKeyScanOptions {
  /** Only the decorated classes matching one of these (default: every decorated class the application imported). */
  include?: PreparableKeyMatcher | PreparableKeyMatcher[];
  /** Leaves out the decorated classes matching one of these; applied after include. */
  exclude?: PreparableKeyMatcher | PreparableKeyMatcher[];
  /** Default true: the keys (and forFeature's registry) are visible to every module. */
  isGlobal?: boolean;
}

export interface PrepareKeyModuleOptions extends PrepareKeyBackendOptions, PrepareKeyScanOptions {}

export interface PrepareKeyOptionsFactory {
  createPrepareKeyOptions(): PrepareKeyBackendOptions | Promise<PrepareKeyBackendOptions>;
}

export interface PrepareKeyModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'>, PrepareKeyScanOptions {
  useFactory?: (...args: any[]) => PrepareKeyBackendOptions | Promise<PrepareKeyBackendOptions>;
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  useClass?: Type<PrepareKeyOptionsFactory>;
  useExisting?: Type<PrepareKeyOptionsFactory>;
}

/** An entry of `forFeature`: a key class, or a bare key name served as a plain PrepareKey. */
export type PrepareKeyFeature = PrepareKeyClass | string;
