import type { PrepareKey } from './prepare-key.js';

/**
 * Puts the reservations of one key back into a store that lost them, from their owners (the
 * aggregates that hold the values): `target` is that key's PrepareKey writing into the store
 * before it is sealed again. Reserve each value for its owner as usual; a value already held by
 * the same owner is not a conflict (several instances may restore at once).
 */
export type PrepareKeyRestorer<V = any> = (target: PrepareKey<V>) => Promise<void>;

/**
 * A backend: creates the PrepareKey of a given name. An abstract class rather than an
 * interface so that it exists at runtime (usable as a DI token, `instanceof`-checkable at
 * bootstrap); implementing it structurally works as well.
 */
export abstract class PrepareKeyFactory {
  abstract create<V = unknown>(name: string): PrepareKey<V>;

  /**
   * One round trip to the store, as a health check runs it: resolves once the store answered,
   * rejects with the driver's error otherwise. The built-in backends send their store's own
   * ping; this default, for factories written elsewhere, reads a key nobody reserves.
   */
  async ping(): Promise<void> {
    await this.create(PING_NAME).get(PING_KEY);
  }

  /**
   * Creates (or checks) what the backend stores records in, before the first request:
   * PrepareKeyModule calls it at bootstrap. Nothing to do for most backends.
   */
  async ensureSchema(): Promise<void> {}

  private readonly restorersByName = new Map<string, PrepareKeyRestorer>();

  /**
   * How the reservations of key `name` are restored when its store lost them (Redis without
   * persistence, a flush, a failover to an empty node): the last restorer given for a name wins.
   * `@UniqueKey` repositories register theirs through PrepareKeyModule; an application that
   * reserves keys itself gives one here. A store that cannot lose its data never calls it.
   */
  restoreWith(name: string, restorer: PrepareKeyRestorer): void {
    this.restorersByName.set(name, restorer);
  }

  /** The restorers given, by key name. */
  protected givenRestorers(): ReadonlyMap<string, PrepareKeyRestorer> {
    return this.restorersByName;
  }

  /**
   * Before the first request (PrepareKeyModule's bootstrap runs it): a store that can lose its
   * data and is not sealed has every key's reservations restored, then is sealed. Without it, the
   * first operation of the process does the same. Nothing to do for a durable store.
   */
  async restoreIfLost(): Promise<void> {}
}

/** The name and key the default `ping()` reads: reserved for it, never written. */
const PING_NAME = 'ddd-kit-ping';
const PING_KEY = 'probe';
