import type { PrepareKeyFactory } from './prepare-key.factory.js';
import { DisabledPrepareKey } from './disabled-prepare-key.js';
import { PrepareKeyFactoryMissingError, PrepareKeyModuleOptionsError, PrepareKeyNameConflictError } from './errors.js';
import type { PrepareKeyClass, PreparableKeyDeclaration } from './interfaces/preparable-key-declaration.interface.js';
import type { PrepareKeyModuleOptions } from './interfaces/prepare-key-module-options.interface.js';
import type { PrepareKey } from './prepare-key.js';
import { createPrepareKeyProxy } from './prepare-key.proxy.js';
import type { PrepareKeyScan } from './prepare-key.scanner.js';
import { declarationOf, describeValue } from './prepare-key.utils.js';

/**
 * One per PrepareKeyModule.forRoot (so two applications in one process share nothing): the
 * backend's key of each name — one per name, shared by every injection route — and the
 * injected object of each key class. Validates the options at bootstrap.
 */
export class PrepareKeyRegistry {
  /** False when the module was configured with `enabled: false`. */
  readonly enabled: boolean;
  private readonly backends = new Map<string, PrepareKey<any>>();
  private readonly proxies = new Map<PrepareKeyClass, PrepareKey<any>>();
  private readonly owners = new Map<string, PrepareKeyClass>();
  private readonly restorers = new Map<string, Array<(target: PrepareKey<any>) => Promise<unknown>>>();

  constructor(
    private readonly options: PrepareKeyModuleOptions,
    scan: PrepareKeyScan,
    /** forRootAsync: include/exclude had to be given to forRootAsync itself. */
    fromAsyncFactory = false,
  ) {
    if (scan.problem) throw scan.problem;
    validateOptions(options, fromAsyncFactory);
    this.enabled = options.enabled ?? true;
    if (this.enabled && !options.factory && scan.declarations.length > 0) {
      throw new PrepareKeyFactoryMissingError(scan.declarations.map(label));
    }
    for (const declaration of scan.declarations) this.claim(declaration);
  }

  /** The backend in use: the factory given, or the one the module opened for `redis: { url }`. */
  get factory(): PrepareKeyFactory | undefined {
    return this.options.factory;
  }

  /** Creates (or checks) the backend's tables before the first request; PrepareKeyCoreModule runs it at init. */
  async ensureSchema(): Promise<void> {
    if (this.enabled) await this.options.factory?.ensureSchema?.();
  }

  /**
   * How the reservations of key `name` are put back when the store lost them: `restore(target)`
   * reserves its owners' values in `target` (the declared class's object, so a key it normalises
   * is stored as every request stores it). Each `@UniqueKey` repository registers one; they run
   * one after another, before the store is sealed again (PrepareKeyFactory.restoreWith).
   */
  restoreWith(name: string, restore: (target: PrepareKey<any>) => Promise<unknown>): void {
    const factory = this.options.factory;
    if (!this.enabled || typeof factory?.restoreWith !== 'function') return;
    let list = this.restorers.get(name);
    if (list === undefined) {
      const all: Array<(target: PrepareKey<any>) => Promise<unknown>> = (list = []);
      this.restorers.set(name, all);
      factory.restoreWith(name, async (backend) => {
        const owner = this.owners.get(name);
        const target = owner ? createPrepareKeyProxy(owner, backend) : backend;
        for (const each of all) await each(target);
      });
    }
    list.push(restore);
  }

  /** At bootstrap, once every restorer is registered: a store that lost its data is filled again and sealed. */
  async restoreIfLost(): Promise<void> {
    if (this.enabled) await this.options.factory?.restoreIfLost?.();
  }

  /** The injected object of a key class (decorated, or undecorated with its simple name). */
  forClass<T extends PrepareKey<any>>(target: PrepareKeyClass<T>): T {
    let proxy = this.proxies.get(target);
    if (!proxy) {
      const declaration = declarationOf(target);
      this.claim(declaration);
      proxy = createPrepareKeyProxy(target, this.backend(declaration.name, label(declaration)));
      this.proxies.set(target, proxy);
    }
    return proxy as T;
  }

  /** A bare name: the object of the class registered under it if any, else the backend's plain key. */
  forName(name: string): PrepareKey<any> {
    const owner = this.owners.get(name);
    return owner ? this.forClass(owner) : this.backend(name, `'${name}'`);
  }

  private backend(name: string, what: string): PrepareKey<any> {
    let key = this.backends.get(name);
    if (!key) {
      if (!this.enabled) key = new DisabledPrepareKey(name);
      else if (!this.options.factory) throw new PrepareKeyFactoryMissingError([what]);
      else key = this.options.factory.create(name);
      this.backends.set(name, key);
    }
    return key;
  }

  private claim(declaration: PreparableKeyDeclaration): void {
    const owner = this.owners.get(declaration.name);
    if (owner && owner !== declaration.target) {
      throw new PrepareKeyNameConflictError(declaration.name, [owner.name, declaration.target.name]);
    }
    this.owners.set(declaration.name, declaration.target);
  }
}

function label(declaration: PreparableKeyDeclaration): string {
  return `'${declaration.name}' (${declaration.target.name})`;
}

function validateOptions(options: PrepareKeyModuleOptions, fromAsyncFactory: boolean): void {
  if (options === null || typeof options !== 'object') {
    throw new PrepareKeyModuleOptionsError(
      `PrepareKeyModule options must be an object such as { factory: new MemoryPrepareKeyFactory() }, got ${describeValue(options)}`,
    );
  }
  const { factory, enabled } = options;
  if (factory !== undefined && (factory === null || typeof (factory as { create?: unknown }).create !== 'function')) {
    throw new PrepareKeyModuleOptionsError(
      `PrepareKeyModule factory must be a PrepareKeyFactory (an object with create(name)), such as ` +
        `new MemoryPrepareKeyFactory() or new RedisPrepareKeyFactory(redis); got ${describeValue(factory)}`,
    );
  }
  if (enabled !== undefined && typeof enabled !== 'boolean') {
    throw new PrepareKeyModuleOptionsError(
      `PrepareKeyModule enabled must be true or false, got ${describeValue(enabled)}`,
    );
  }
  if (fromAsyncFactory && ('include' in options || 'exclude' in options || 'isGlobal' in options)) {
    throw new PrepareKeyModuleOptionsError(
      `PrepareKeyModule.forRootAsync: include, exclude and isGlobal decide which providers exist, so they cannot come ` +
        `from useFactory; pass them to forRootAsync({ include, exclude, isGlobal, useFactory }) itself`,
    );
  }
}
