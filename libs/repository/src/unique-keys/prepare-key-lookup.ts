import type { UniqueKeyReservations } from './unique-key.interfaces.js';

/**
 * The PrepareKeys of PrepareKeyModule by name, under a token both libraries know (process-wide,
 * so two installed copies agree): a repository whose aggregate declares `@UniqueKey`s injects
 * it, and so waits until PrepareKeyModule's backend is ready.
 */
export const PREPARE_KEY_LOOKUP = Symbol.for('@ddd-kit/prepare-key:lookup');

export interface PrepareKeyLookup {
  /** The PrepareKey of that name (a declared key class's injected object, or the backend's key). */
  forName(name: string): UniqueKeyReservations;
}
