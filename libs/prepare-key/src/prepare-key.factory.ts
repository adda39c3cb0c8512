import type { PrepareKey } from './prepare-key.js';

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
}

/** The name and key the default `ping()` reads: reserved for it, never written. */
const PING_NAME = 'ddd-kit-ping';
const PING_KEY = 'probe';
