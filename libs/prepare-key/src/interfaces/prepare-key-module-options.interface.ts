import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Type } from '@nestjs/common';
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
  | PrepareKeyClass
  | string
  | RegExp
  | ((declaration: PreparableKeyDeclaration) => boolean);

/** The backend settings; all that forRootAsync's factory may produce. */
export interface PrepareKeyBackendOptions {
  /** The backend every key is created from: `new MemoryPrepareKeyFactory()`, `new RedisPrepareKeyFactory(redis)`, … */
  factory?: PrepareKeyFactory;
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
