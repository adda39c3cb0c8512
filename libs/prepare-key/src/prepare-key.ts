import { isOperationTimeout } from '@ddd-kit/core/internal';
import { canonicalJson, parseCanonicalJson } from './canonical-json.js';
import { PrepareKeyArgumentError, PrepareKeyStateError } from './errors.js';
import type { PreparedRecord, RecordPage, RollbackCondition, StoredRecord } from './prepare-key.interfaces.js';
import { newOperationId } from './operation-id.js';
import { assertKey, assertTtlAt } from './prepare-key.validation.js';
import { PreparedValue, TTL_FOREVER } from './prepared-value.js';
import {
  changedOrNot,
  changedOrTaken,
  operations,
  prepareKeyTelemetry,
  releasedOrNot,
  wonOrTaken,
} from './telemetry/prepare-key.telemetry.js';

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
 * Faults between the library and its store (a lost reply, a command the client resends after
 * a reconnect, a timeout while the server acts) never turn into a wrong answer: every write
 * carries an operation id that the store keeps with the record (a rollback leaves a short-lived
 * tombstone with its id), so a resent command recognises its own earlier effect and answers as
 * the first run did. An operation whose outcome stays unknown rejects.
 *
 * What it is not: a transaction across stores. Atomicity is per operation and per backend.
 */
export abstract class PrepareKey<V = unknown> {
  /** The key space's name, e.g. 'username'. */
  abstract readonly name: string;

  /**
   * The object whose ambient transaction this key's operations join (the pg Pool of a
   * PostgreSQL backend), or undefined when they are not transactional. A repository on the same
   * pool commits reservations and aggregate in one transaction.
   */
  get transactionScope(): object | undefined {
    return undefined;
  }

  /**
   * Reserves `key` for `value` when the key is absent or its record has expired.
   * Plain values are forever; pass `toTtlAt(value, at)` for a temporary reservation.
   * Resolves false when an unexpired record holds the key — whatever its value, this one included.
   *
   * A resend of this call's own command (after a lost reply) answers true, never false. When it
   * rejects, what this call may have written is released again before the error propagates (when
   * the store can be reached), so a rejected prepare leaves no reservation behind.
   */
  prepare(key: string, value: V | PreparedValue<V>): Promise<boolean> {
    // Not `async`: the hot path hands the backend's promise straight back (no extra
    // microtask hops); bad input still arrives as a rejection, never a synchronous throw.
    // Telemetry adds a step only when an OpenTelemetry SDK records it (`telemetry` is defined).
    const telemetry = prepareKeyTelemetry.begin('prepare_key.prepare', operations, 'prepare', this.name);
    let answered: Promise<boolean>;
    try {
      assertKey(key);
      const { json, ttlAt } = encodePrepared(value);
      const op = newOperationId();
      answered =
        telemetry === undefined
          ? this.doPrepareOrUndo(key, json, ttlAt, op)
          : telemetry.within(this.doPrepareOrUndo, this, key, json, ttlAt, op);
    } catch (error) {
      answered = Promise.reject(error);
    }
    return telemetry === undefined ? answered : telemetry.settle(answered, wonOrTaken);
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
   * `getValue` of many keys in as few round trips as the backend allows (reconciliation reads a
   * page of keys at a time): the keys that have a record, with its value, expired or not.
   */
  async getValues(keys: readonly string[]): Promise<Map<string, PreparedValue<V>>> {
    const found = new Map<string, PreparedValue<V>>();
    // A class that overrides getValue (normalising keys, say) is asked key by key: its rule holds.
    if (this.getValue !== PrepareKey.prototype.getValue) {
      const values = await Promise.all(keys.map((key) => this.getValue(key)));
      for (const [i, value] of values.entries()) if (value !== undefined) found.set(keys[i], value);
      return found;
    }
    for (const key of keys) assertKey(key);
    const records = keys.length === 0 ? [] : await this.doGetValues(keys);
    for (const [i, record] of records.entries()) if (record !== undefined) found.set(keys[i], decodeRecord<V>(record));
    return found;
  }

  /**
   * `rollback(key)` deletes the record whatever its value or expiry;
   * `rollback(key, value)` deletes it only while its value equals `value`.
   * Resolves false when nothing was deleted.
   */
  rollback(key: string): Promise<boolean>;
  rollback(key: string, value: V): Promise<boolean>;
  rollback(key: string, ...rest: [V?]): Promise<boolean> {
    return this.observe('prepare_key.rollback', 'rollback', () => this.rollbackNow(key, rest), releasedOrNot);
  }

  private async rollbackNow(key: string, rest: [V?]): Promise<boolean> {
    assertKey(key);
    if (rest.length === 0) return this.doRollback(key, newOperationId());
    return this.doRollback(key, newOperationId(), { value: canonicalJson(unwrap(rest[0] as V | PreparedValue<V>)) });
  }

  /**
   * - `reprepare(key, value)`: replaces the value of an unexpired record (false: absent or expired).
   * - `reprepare(key, oldValue, newValue)`: replaces it while its value equals oldValue (false: absent or another value).
   * - `reprepare(oldKey, oldValue, newKey, newValue)`: moves a reservation to another key:
   *   `prepare(newKey)`, then `rollback(oldKey, oldValue)`. False when newKey is held (oldKey
   *   untouched). When oldKey is not held by oldValue it rejects with PrepareKeyStateError, and
   *   releases newKey only when oldKey is known to be held by another value. When the outcome of
   *   releasing oldKey is unknown, newKey stays held and the error propagates: both keys held is
   *   the recoverable state, neither held never happens. Two operations, not one atomic step: a
   *   crash between them also leaves both keys held (see the README).
   */
  reprepare(key: string, value: V | PreparedValue<V>): Promise<boolean>;
  reprepare(key: string, oldValue: V, newValue: V | PreparedValue<V>): Promise<boolean>;
  reprepare(oldKey: string, oldValue: V, newKey: string, newValue: V | PreparedValue<V>): Promise<boolean>;
  reprepare(key: string, ...rest: unknown[]): Promise<boolean> {
    if (rest.length === 3) {
      const [oldValue, newKey, newValue] = rest as [V, string, V | PreparedValue<V>];
      return this.observe(
        'prepare_key.change_key',
        'change_key',
        () => this.changeKey(key, oldValue, newKey, newValue),
        changedOrTaken,
      );
    }
    return this.observe('prepare_key.reprepare', 'reprepare', () => this.reprepareValue(key, rest), changedOrNot);
  }

  private async reprepareValue(key: string, rest: unknown[]): Promise<boolean> {
    assertKey(key);
    if (rest.length === 1) {
      const { json, ttlAt } = encodePrepared(rest[0] as V | PreparedValue<V>);
      return this.doReprepare(key, json, ttlAt, newOperationId());
    }
    if (rest.length === 2) {
      const oldJson = canonicalJson(unwrap(rest[0] as V | PreparedValue<V>));
      const { json, ttlAt } = encodePrepared(rest[1] as V | PreparedValue<V>);
      return this.doReprepare(key, json, ttlAt, newOperationId(), oldJson);
    }
    throw new PrepareKeyArgumentError(`reprepare takes 2, 3 or 4 arguments, got ${rest.length + 1}`);
  }

  /**
   * 1) prepare; 2) `then(prepared)` whether it is true or false; 3) only when prepared and
   * `then` throws or rejects, the conditional rollback(key, value); 4) the original error
   * propagates — or the rollback's own error when that fails. Success commits nothing more:
   * the reservation stays until rollback, reprepare or expiry. Nothing is rolled back when the
   * caller merely stops waiting (there is no cancellation in a promise). When `prepare` itself
   * rejects, `then` is not called (prepare has released what it may have taken).
   *
   * `then` guards a step of the caller's: when it rejects with an error whose outcome is unknown
   * (its own store's reply lost), the reservation is still released here. A caller whose step
   * may have happened despite an error should catch that inside `then` and check.
   */
  usingPrepare<R>(
    key: string,
    value: V | PreparedValue<V>,
    then: (prepared: boolean) => R | PromiseLike<R>,
  ): Promise<R> {
    const telemetry = prepareKeyTelemetry.begin('prepare_key.using_prepare', operations, 'using_prepare', this.name);
    if (telemetry === undefined) return this.reserveThen(key, value, then);
    let prepared = false;
    const observed = (answer: boolean): R | PromiseLike<R> => {
      prepared = answer;
      return then(answer);
    };
    // `then` runs inside this span: the step the reservation guards shows as its child.
    return telemetry.settle(
      telemetry.within(() => this.reserveThen(key, value, observed)),
      () => wonOrTaken(prepared),
    );
  }

  private async reserveThen<R>(
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

  private async changeKey(
    oldKey: string,
    oldValue: V,
    newKey: string,
    newValue: V | PreparedValue<V>,
  ): Promise<boolean> {
    assertKey(oldKey, 'oldKey');
    assertKey(newKey, 'newKey');
    if (oldKey === newKey) {
      throw new PrepareKeyArgumentError(
        `reprepare: oldKey and newKey are both '${oldKey}'; use reprepare(key, oldValue, newValue) to change the value of one key`,
      );
    }
    // Validate both values before taking the new key, so bad input changes nothing.
    const oldJson = canonicalJson(unwrap(oldValue));
    encodePrepared(newValue);
    // A rejected prepare has released whatever it may have taken: oldKey is untouched.
    if (!(await this.prepare(newKey, newValue))) return false;
    // From here on newKey is held. An error releasing oldKey leaves its outcome unknown: keep
    // newKey (both held can be repaired; neither held could hand oldKey's owner's name away).
    if (await this.rollback(oldKey, oldValue)) return true;
    // oldKey is not held by oldValue. Release newKey only when another value holds oldKey:
    // when oldKey is free, this call's value may well be the only reservation left.
    const current = await this.getValue(oldKey);
    if (current !== undefined && !current.isExpired(this.now()) && canonicalJson(current.value) !== oldJson) {
      await this.rollback(newKey, unwrap(newValue));
      throw new PrepareKeyStateError(this.name, oldKey, newKey, true);
    }
    throw new PrepareKeyStateError(this.name, oldKey, newKey, false);
  }

  /** Runs one call inside its span and counts it by outcome (just runs it when nothing records). */
  private observe(
    spanName: string,
    operation: string,
    run: () => Promise<boolean>,
    outcome: (result: boolean) => string,
  ): Promise<boolean> {
    const telemetry = prepareKeyTelemetry.begin(spanName, operations, operation, this.name);
    return telemetry === undefined ? run() : telemetry.settle(telemetry.within(run), outcome);
  }

  /**
   * After a prepare whose outcome is unknown: deletes the record if this operation wrote it (and
   * nothing has replaced it since), then rethrows. A failure to clean up is not the caller's
   * error: the original one propagates. After the operation deadline the store is not answering:
   * the cleanup is sent but not waited for (the caller would wait a second deadline for nothing);
   * it follows the write on the same connection, so it runs after it once the store answers.
   */
  protected async undoPrepare(key: string, op: string, error: unknown): Promise<never> {
    const undone = this.doRollback(key, newOperationId(), { op });
    if (isOperationTimeout(error)) {
      undone.catch(() => undefined); // left to reconciliation when it does not get through
      throw error;
    }
    try {
      await undone;
    } catch {
      // The store is still unreachable: the reservation, if any, is left to reconciliation.
    }
    throw error;
  }

  // ---- The backend SPI: each primitive is one atomic step on the store. Values arrive as
  // canonical JSON strings, so equality is string equality on every backend. Every write
  // carries `op`, an id unique to the call: the backend stores it with what it writes, and a
  // command that finds its own op already applied (a resend after a lost reply) answers as the
  // first run did.

  /**
   * Writes { value, ttlAt, op } when the key is absent or its record has expired (ttlAt <= now).
   * True also when the record already carries `op` (this very write, resent).
   */
  protected abstract doPrepare(key: string, value: string, ttlAt: number, op: string): Promise<boolean>;

  /**
   * `doPrepare`, and on a rejection `undoPrepare`. A backend whose own reply handling can send a
   * failure to `undoPrepare` overrides this to save a promise step on the hot path; every other
   * backend keeps this default.
   */
  protected doPrepareOrUndo(key: string, value: string, ttlAt: number, op: string): Promise<boolean> {
    return this.doPrepare(key, value, ttlAt, op).then(undefined, (error: unknown) => this.undoPrepare(key, op, error));
  }

  /** The record, expired or not; undefined when there is none (a tombstone is none). */
  protected abstract doGetValue(key: string): Promise<StoredRecord | undefined>;

  /** doGetValue of each key, in order; a backend that reads many keys in one round trip overrides it. */
  protected doGetValues(keys: readonly string[]): Promise<Array<StoredRecord | undefined>> {
    return Promise.all(keys.map((key) => this.doGetValue(key)));
  }

  /**
   * Deletes the record — with `condition`, only while its value (or its op) equals it — and
   * leaves a short-lived tombstone carrying `op`. True also when that tombstone is already there
   * (this very rollback, resent).
   */
  protected abstract doRollback(key: string, op: string, condition?: RollbackCondition): Promise<boolean>;

  /**
   * Replaces value and ttlAt and records `op`. Without `expected`: only while the record exists
   * and has not expired. With `expected`: only while its value equals it (expired or not). True
   * also when the record already carries `op`.
   */
  protected abstract doReprepare(
    key: string,
    value: string,
    ttlAt: number,
    op: string,
    expected?: string,
  ): Promise<boolean>;

  /** One page of records (tombstones left out), starting after `cursor` (undefined: the first page). */
  protected abstract doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage>;
}

function unwrap<V>(value: V | PreparedValue<V>): V {
  return value instanceof PreparedValue ? (value.value as V) : value;
}

function encodePrepared<V>(value: V | PreparedValue<V>): { json: string; ttlAt: number } {
  // A plain value is forever; no PreparedValue is built for it (this runs on every prepare).
  if (!(value instanceof PreparedValue)) return { json: canonicalJson(value), ttlAt: TTL_FOREVER };
  assertTtlAt(value.ttlAt);
  return { json: canonicalJson(value.value), ttlAt: value.ttlAt };
}

function decodeRecord<V>(record: StoredRecord): PreparedValue<V> {
  return new PreparedValue(parseCanonicalJson<V>(record.value), record.ttlAt);
}
