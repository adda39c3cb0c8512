/**
 * The token under which PrepareKeyModule provides its PrepareKeys by name, for the libraries that
 * reserve keys through them (@ddd-kit/repository's `@UniqueKey`s). Injecting it is what makes a
 * repository wait until PrepareKeyModule's backend is ready. Registered with Symbol.for, so two
 * installed copies of the libraries agree on it.
 */
export const PREPARE_KEY_LOOKUP: unique symbol = Symbol.for('@ddd-kit/prepare-key:lookup');

/** What is provided under PREPARE_KEY_LOOKUP. */
export interface PrepareKeyLookup<K = unknown> {
  /** The PrepareKey of that name: a declared key class's injected object, or the backend's key. */
  forName(name: string): K;
  /**
   * Registers how the reservations of key `name` are put back when their store lost them (a
   * Redis without persistence, wiped): `restore(target)` reserves every owner's value again in
   * `target`, that key writing into the store before it is sealed again. Several may be
   * registered for one name (one per aggregate type that declares it).
   */
  restoreWith?(name: string, restore: (target: K) => Promise<unknown>): void;
}
