import { canonicalJson, parseCanonicalJson } from './canonical-json.js';
import { PrepareKeyArgumentError } from './errors/prepare-key-argument.error.js';
import { PrepareKeyStateError } from './errors/prepare-key-state.error.js';
import type { PreparedRecord, RecordPage, StoredRecord } from './prepare-key.interfaces.js';
import { assertKey, assertTtlAt } from './prepare-key.validation.js';
import { PreparedValue, TTL_FOREVER } from './prepared-value.js';

const DEFAULT_PAGE_SIZE = 500;

/**
 * Application-level reservation of keys (usernames, SKUs) that aggregates contend for.
 *
 * This class is the contract and its compositions. A backend extends it and implements the
 * protected `do*` primitives, each one atomic on its store; everything here — input
 * validation, canonical-JSON equality, expiry filtering in `get`, the key change and
 * `usingPrepare` — is written once on top of them. An application declares its keys as
 * abstract subclasses (`@PreparableKey('username') abstract class UsernamePrepareKey
 * extends PrepareKey<UsernameIndex> {}`) and injects them; the injected object delegates
 * to the backend's key of that name.
 *
 * What it is not: a transaction across stores. Atomicity is per operation and per backend.
 */
export abstract class PrepareKey<V = unknown> {
  /** The key space's name, e.g. 'username'. */
  abstract readonly name: string;

  /**
   * Reserves `key` for `value` when the key is absent or its record has expired.
   * Plain values are forever; pass `toTtlAt(value, at)` for a temporary reservation.
   * Resolves false when an unexpired record holds the key — whatever its value, this one included.
   */
  prepare(key: string, value: V | PreparedValue<V>): Promise<boolean> {
    // Not `async`: the hot path hands the backend's promise straight back (no extra
    // microtask hops); bad input still arrives as a rejection, never a synchronous throw.
    try {
      assertKey(key);
      const { json, ttlAt } = encodePrepared(value);
      return this.doPrepare(key, json, ttlAt);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The value when a record exists and has not expired. */
  async get(key: string): Promise<V | undefined> {
    const prepared = await this.getValue(key);
    // Expiry is filtered here, at the interface, so every backend agrees on it.
    return prepared && !prepared.isExpired(this.now()) ? prepared.value : undefined;
  }

  /** The stored value and its ttlAt whenever a record exists, expired or not. */
  async getValue(key: string): Promise<PreparedValue<V> | undefined> {
    assertKey(key);
    const record = await this.doGetValue(key);
    return record && decodeRecord<V>(record);
  }

  /**
   * `rollback(key)` deletes the record whatever its value or expiry;
   * `rollback(key, value)` deletes it only while its value equals `value`.
   * Resolves false when nothing was deleted.
   */
  rollback(key: string): Promise<boolean>;
  rollback(key: string, value: V): Promise<boolean>;
  async rollback(key: string, ...rest: [V?]): Promise<boolean> {
    assertKey(key);
    if (rest.length === 0) return this.doRollback(key);
    return this.doRollback(key, canonicalJson(unwrap(rest[0] as V | PreparedValue<V>)));
  }

  /**
   * - `reprepare(key, value)`: replaces the value of an unexpired record (false: absent or expired).
   * - `reprepare(key, oldValue, newValue)`: replaces it while its value equals oldValue (false: absent or another value).
   * - `reprepare(oldKey, oldValue, newKey, newValue)`: moves a reservation to another key:
   *   `prepare(newKey)`, then `rollback(oldKey, oldValue)`. False when newKey is held (oldKey
   *   untouched). When oldKey is not held by oldValue it rejects with PrepareKeyStateError after
   *   releasing newKey. Two operations with compensation, not one atomic step: a crash between
   *   them leaves both keys held (see the README).
   */
  reprepare(key: string, value: V | PreparedValue<V>): Promise<boolean>;
  reprepare(key: string, oldValue: V, newValue: V | PreparedValue<V>): Promise<boolean>;
  reprepare(oldKey: string, oldValue: V, newKey: string, newValue: V | PreparedValue<V>): Promise<boolean>;
  async reprepare(key: string, ...rest: unknown[]): Promise<boolean> {
    if (rest.length === 3) {
      const [oldValue, newKey, newValue] = rest as [V, string, V | PreparedValue<V>];
      return this.changeKey(key, oldValue, newKey, newValue);
    }
    assertKey(key);
    if (rest.length === 1) {
      const { json, ttlAt } = encodePrepared(rest[0] as V | PreparedValue<V>);
      return this.doReprepare(key, json, ttlAt);
    }
    if (rest.length === 2) {
      const oldJson = canonicalJson(unwrap(rest[0] as V | PreparedValue<V>));
      const { json, ttlAt } = encodePrepared(rest[1] as V | PreparedValue<V>);
      return this.doReprepare(key, json, ttlAt, oldJson);
    }
    throw new PrepareKeyArgumentError(`reprepare takes 2, 3 or 4 arguments, got ${rest.length + 1}`);
  }

  /**
   * 1) prepare; 2) `then(prepared)` whether it is true or false; 3) only when prepared and
   * `then` throws or rejects, the conditional rollback(key, value); 4) the original error
   * propagates — or the rollback's own error when that fails. Success commits nothing more:
   * the reservation stays until rollback, reprepare or expiry. Nothing is rolled back when the
   * caller merely stops waiting (there is no cancellation in a promise).
   */
  async usingPrepare<R>(
    key: string,
    value: V | PreparedValue<V>,
    then: (prepared: boolean) => R | PromiseLike<R>,
  ): Promise<R> {
    const prepared = await this.prepare(key, value);
    try {
      return await then(prepared);
    } catch (error) {
      if (prepared) await this.rollback(key, unwrap(value));
      throw error;
    }
  }

  /**
   * Every record, expired ones included, page by page (`pageSize` per backend round trip), so a
   * key space of any size can be swept without loading it into memory. Records written or
   * removed during the sweep may or may not be seen; none present throughout is missed.
   */
  async *records(options: { pageSize?: number } = {}): AsyncIterableIterator<PreparedRecord<V>> {
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new PrepareKeyArgumentError(`pageSize must be a positive integer, got ${String(pageSize)}`);
    }
    let cursor: string | undefined;
    do {
      const page = await this.doListPage(cursor, pageSize);
      for (const record of page.records) yield { key: record.key, value: decodeRecord<V>(record) };
      cursor = page.next;
    } while (cursor !== undefined);
  }

  /** The clock `get` filters expiry with; backends that decide expiry elsewhere may override it. */
  protected now(): number {
    return Date.now();
  }

  private async changeKey(oldKey: string, oldValue: V, newKey: string, newValue: V | PreparedValue<V>): Promise<boolean> {
    assertKey(oldKey, 'oldKey');
    assertKey(newKey, 'newKey');
    if (oldKey === newKey) {
      throw new PrepareKeyArgumentError(
        `reprepare: oldKey and newKey are both '${oldKey}'; use reprepare(key, oldValue, newValue) to change the value of one key`,
      );
    }
    // Validate the old value before taking the new key, so bad input changes nothing.
    canonicalJson(unwrap(oldValue));
    return this.usingPrepare(newKey, newValue, async (prepared) => {
      if (!prepared) return false;
      if (!(await this.rollback(oldKey, unwrap(oldValue)))) {
        throw new PrepareKeyStateError(this.name, oldKey, newKey);
      }
      return true;
    });
  }

  // ---- The backend SPI: each primitive is one atomic step on the store. Values arrive as
  // canonical JSON strings, so equality is string equality on every backend.

  /** Writes { value, ttlAt } when the key is absent or its record has expired (ttlAt <= now). */
  protected abstract doPrepare(key: string, value: string, ttlAt: number): Promise<boolean>;

  /** The record, expired or not; undefined when there is none. */
  protected abstract doGetValue(key: string): Promise<StoredRecord | undefined>;

  /** Deletes the record; with `expected`, only while its value equals it. */
  protected abstract doRollback(key: string, expected?: string): Promise<boolean>;

  /**
   * Replaces value and ttlAt. Without `expected`: only while the record exists and has not
   * expired. With `expected`: only while its value equals it (expired or not).
   */
  protected abstract doReprepare(key: string, value: string, ttlAt: number, expected?: string): Promise<boolean>;

  /** One page of records, starting after `cursor` (undefined: the first page). */
  protected abstract doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage>;
}

function unwrap<V>(value: V | PreparedValue<V>): V {
  return value instanceof PreparedValue ? (value.value as V) : value;
}

function encodePrepared<V>(value: V | PreparedValue<V>): { json: string; ttlAt: number } {
  const prepared = value instanceof PreparedValue ? value : new PreparedValue(value, TTL_FOREVER);
  assertTtlAt(prepared.ttlAt);
  return { json: canonicalJson(prepared.value), ttlAt: prepared.ttlAt };
}

function decodeRecord<V>(record: StoredRecord): PreparedValue<V> {
  return new PreparedValue(parseCanonicalJson<V>(record.value), record.ttlAt);
}
