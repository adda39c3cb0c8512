/**
 * IDs are plain values: a non-empty string or a finite number. Anything else (objects above
 * all) is refused before it reaches a store, so an ID can never become a query operator.
 */
export type AggregateId = string | number;
