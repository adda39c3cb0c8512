import type { AggregateRoot } from './aggregate-root.js';

/**
 * IDs are plain values: a non-empty string or a finite number. Anything else (objects above
 * all) is refused before it reaches a store, so an ID can never become a query operator.
 */
export type AggregateId = string | number;

/** An aggregate class (abstract classes included): the key of repositories and handlers. */

export type AggregateClass<T extends AggregateRoot<any, any> = AggregateRoot<any, any>> = abstract new (
  ...args: any[]
) => T;
