import type { PrepareKey } from './prepare-key.js';

/**
 * A backend: creates the PrepareKey of a given name. An abstract class rather than an
 * interface so that it exists at runtime (usable as a DI token, `instanceof`-checkable at
 * bootstrap); implementing it structurally works as well.
 */
export abstract class PrepareKeyFactory {
  abstract create<V = unknown>(name: string): PrepareKey<V>;
}
