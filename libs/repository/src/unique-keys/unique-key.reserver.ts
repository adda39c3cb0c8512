import { Logger } from '@nestjs/common';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import { RepositoryConfigurationError, UniqueKeyViolationError } from '../errors.js';
import type {
  UniqueKeyDefinition,
  UniqueKeyOwner,
  UniqueKeyReservations,
  UniqueKeyResolver,
  UniqueKeyValue,
} from './unique-key.interfaces.js';

/** A unique-key value of one key: (name, key). */
export interface KeyRef {
  name: string;
  key: string;
}

/** A value this write reserved, with the exact owner record it wrote (releases compare it). */
export interface TakenKey extends KeyRef {
  owner: UniqueKeyOwner;
}

/** What a write does with the keys: reserve before it, release once it is durable. */
export interface KeyPlan {
  take: KeyRef[];
  release: KeyRef[];
  /** The values stored once the write succeeded. */
  after: ReadonlyMap<string, string | undefined>;
}

export type KeyValues = ReadonlyMap<string, string | undefined>;

/** Attempts to take one key while it keeps changing hands (freed, re-taken) under us. */
const MAX_TAKE_ATTEMPTS = 5;

const logger = new Logger('UniqueKeys');

/**
 * Reserves and releases the unique-key values of one aggregate type: the steps that
 * UniqueKeyWriter orders around every write, and what reconcileUniqueKeys repairs with. The rules:
 *  - reserve before the write, release after it; on a change, the new value is held before the
 *    old one is let go, so a failure in between leaves both held (recoverable), never neither;
 *  - a value held by the same aggregate (a retry, or a concurrent write of the same aggregate)
 *    is not a conflict: the reservation is taken over by compare-and-set, so each write's
 *    reservation record is its own and a release never deletes another write's;
 *  - a reservation is released only when the write it guarded is known not to have happened,
 *    or when the stored aggregate no longer holds that value.
 */
export class UniqueKeyReserver {
  private lastAt = 0;
  private readonly stores = new Map<string, UniqueKeyReservations>();

  constructor(
    readonly aggregateName: string,
    readonly definitions: readonly UniqueKeyDefinition[],
    private readonly resolve: UniqueKeyResolver,
  ) {}

  /** The reservations of key `name`. */
  storeOf(name: string): UniqueKeyReservations {
    let store = this.stores.get(name);
    if (store === undefined) {
      store = this.resolve(name);
      if (store === null || typeof store !== 'object' || typeof store.prepare !== 'function') {
        throw new RepositoryConfigurationError(
          `the reservations of unique key '${name}' (${this.aggregateName}) are not a PrepareKey`,
        );
      }
      this.stores.set(name, store);
    }
    return store;
  }

  /** The aggregate's value of every unique key (undefined: it reserves nothing). */
  valuesOf(aggregate: unknown): Map<string, string | undefined> {
    const values = new Map<string, string | undefined>();
    for (const definition of this.definitions)
      values.set(definition.name, this.keyOf(definition, definition.value(aggregate)));
    return values;
  }

  plan(kind: 'insert' | 'update' | 'remove', current: KeyValues, stored: KeyValues | undefined): KeyPlan {
    const take: KeyRef[] = [];
    const release: KeyRef[] = [];
    for (const { name } of this.definitions) {
      const now = kind === 'remove' ? undefined : current.get(name);
      const before = kind === 'insert' ? undefined : stored?.get(name);
      if (now === before) continue;
      if (now !== undefined) take.push({ name, key: now });
      if (before !== undefined) release.push({ name, key: before });
    }
    // One order for every writer: transactions that lock rows take them in the same order.
    take.sort(byNameAndKey);
    return { take, release, after: kind === 'remove' ? new Map() : current };
  }

  /** The record a write of aggregate `id` reserves with: unique per write within this process. */
  owner(id: AggregateId): UniqueKeyOwner {
    this.lastAt = Math.max(Date.now(), this.lastAt + 1);
    return { aggregate: this.aggregateName, id, at: this.lastAt };
  }

  /**
   * Reserves every key of `take` for `owner`, recording each in `taken` as soon as it is held
   * (so that the caller knows what to release when this throws): UniqueKeyViolationError when
   * another aggregate holds one, the store's error when it fails.
   */
  async take(take: readonly KeyRef[], owner: UniqueKeyOwner, taken: TakenKey[]): Promise<void> {
    for (const ref of take) {
      await this.takeOne(ref, owner);
      taken.push({ ...ref, owner });
    }
  }

  /**
   * Releases reservations this write made, except those whose value the stored aggregate holds
   * (`stored`: its values now; undefined when it is gone or unknown to hold anything).
   * Best effort: a failure leaves the reservation to reconciliation.
   */
  async releaseTaken(taken: readonly TakenKey[], stored: KeyValues | undefined): Promise<void> {
    for (const { name, key, owner } of taken) {
      if (stored?.get(name) === key) continue;
      try {
        await this.storeOf(name).rollback(key, owner);
      } catch (error) {
        logger.warn(
          `could not release ${name} '${key}' of ${this.aggregateName} ${JSON.stringify(owner.id)} (reconciliation will): ${describe(error)}`,
        );
      }
    }
  }

  /**
   * Releases values the aggregate no longer holds: each only while its reservation still
   * names this aggregate (read, then a rollback conditional on exactly what was read). With
   * `strict`, a failure propagates (inside a transaction it must abort the write); otherwise it
   * is logged and left to reconciliation — the write it followed is durable.
   */
  async release(refs: readonly KeyRef[], id: AggregateId, strict: boolean): Promise<void> {
    for (const { name, key } of refs) {
      try {
        const store = this.storeOf(name);
        const current = await store.getValue(key);
        if (current !== undefined && this.isOwner(current.value, id)) await store.rollback(key, current.value);
      } catch (error) {
        if (strict) throw error;
        logger.warn(
          `could not release ${name} '${key}' of ${this.aggregateName} ${JSON.stringify(id)} (reconciliation will): ${describe(error)}`,
        );
      }
    }
  }

  /** True when a reservation names aggregate `id` of this type. */
  isOwner(value: unknown, id: AggregateId): boolean {
    const owner = value as Partial<UniqueKeyOwner> | null;
    return owner !== null && typeof owner === 'object' && owner.aggregate === this.aggregateName && owner.id === id;
  }

  private async takeOne({ name, key }: KeyRef, owner: UniqueKeyOwner): Promise<void> {
    const store = this.storeOf(name);
    let holder: UniqueKeyOwner | undefined;
    for (let attempt = 1; attempt <= MAX_TAKE_ATTEMPTS; attempt++) {
      if (await store.prepare(key, owner)) return;
      const current = await store.getValue(key);
      if (current === undefined || current.isExpired()) continue; // freed meanwhile
      holder = current.value;
      if (!this.isOwner(holder, owner.id)) break;
      // The same aggregate holds it (a retry, a concurrent write of it): take the record over,
      // so that a release by the other write (conditional on its record) leaves ours alone.
      if (await store.reprepare(key, holder, owner)) return;
    }
    throw new UniqueKeyViolationError(name, key, holder && { aggregate: holder.aggregate, id: holder.id });
  }

  private keyOf(definition: UniqueKeyDefinition, value: UniqueKeyValue): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    throw new RepositoryConfigurationError(
      `@UniqueKey('${definition.name}') of ${this.aggregateName} read ${typeof value === 'number' ? String(value) : `a ${typeof value}`}; a unique key is a string, a finite number, or null/undefined for none`,
    );
  }
}

function byNameAndKey(a: KeyRef, b: KeyRef): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
