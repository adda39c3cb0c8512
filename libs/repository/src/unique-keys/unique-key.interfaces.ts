import type { AggregateId } from '../aggregate/aggregate.interfaces.js';

/** The values a unique key may take: a string or a number; `null`/`undefined` reserve nothing. */
export type UniqueKeyValue = string | number | null | undefined;

/** One `@UniqueKey` of an aggregate class. */
export interface UniqueKeyDefinition<T = any> {
  /** The PrepareKey name whose reservations keep the key ('username'). */
  readonly name: string;
  /** The aggregate's value of the key. */
  readonly value: (aggregate: T) => UniqueKeyValue;
}

/** What a reservation of a unique key holds: its owner, and when it was taken (epoch ms). */
export interface UniqueKeyOwner {
  aggregate: string;
  id: AggregateId;
  at: number;
}

/**
 * The reservations of one unique key: what the repository needs of a PrepareKey (structurally,
 * so this package does not depend on @ddd-kit/prepare-key; a PrepareKey<UniqueKeyOwner> is one).
 */
export interface UniqueKeyReservations {
  readonly name: string;
  prepare(key: string, value: UniqueKeyOwner): Promise<boolean>;
  getValue(
    key: string,
  ): Promise<{ value: UniqueKeyOwner; ttlAt: number; isExpired(now?: number): boolean } | undefined>;
  /** getValue of many keys in few round trips (a PrepareKey has it); without it, getValue is called for each. */
  getValues?(
    keys: readonly string[],
  ): Promise<Map<string, { value: UniqueKeyOwner; ttlAt: number; isExpired(now?: number): boolean }>>;
  reprepare(key: string, oldValue: UniqueKeyOwner, newValue: UniqueKeyOwner): Promise<boolean>;
  rollback(key: string, value: UniqueKeyOwner): Promise<boolean>;
  records(options?: {
    pageSize?: number;
  }): AsyncIterable<{ key: string; value: { value: UniqueKeyOwner; ttlAt: number; isExpired(now?: number): boolean } }>;
  /** The object whose ambient transaction these reservations join (a pg Pool), if any. */
  readonly transactionScope?: object;
}

/** Finds the reservations of a unique key by name (RepositoryModule takes them from PrepareKeyModule). */
export type UniqueKeyResolver = (name: string) => UniqueKeyReservations;
