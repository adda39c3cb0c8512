import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PrepareKeyArgumentError } from '../errors/prepare-key-argument.error.js';
import { PrepareKeyStateError } from '../errors/prepare-key-state.error.js';
import { PrepareKey } from '../prepare-key.js';
import type { PrepareKeyFactory } from '../prepare-key.factory.js';
import type { PreparedRecord } from '../prepare-key.interfaces.js';
import { primitivesOf } from '../prepare-key.primitives.js';
import { PreparedValue, TTL_FOREVER, toTtlAt } from '../prepared-value.js';
import {
  describePrepareKeyFaults,
  type PrepareKeyFault,
  type PrepareKeyFaultTarget,
} from './prepare-key-faults.contract.js';

/** What a backend hands the contract suite: its factory, and how to close its clients. */
export interface PrepareKeyContractTarget {
  factory: PrepareKeyFactory;
  close?: () => Promise<void>;
  /** How to inject faults between a client and the store (required when `faults` are listed). */
  faults?: PrepareKeyFaultTarget;
}

export interface PrepareKeyContractOptions {
  /** The faults to run every operation under (see PrepareKeyFault); none by default. */
  faults?: readonly PrepareKeyFault[];
}

/** Short, real TTLs: backends may decide expiry with their own server's clock. */
const SHORT_TTL_MS = 300;
const EXPIRY_MARGIN_MS = 250;
const RACERS = 200;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Owner = { owner: string; n?: number };

/**
 * The one behavioural contract of `PrepareKey`, run unchanged against every backend.
 *
 * `setup` runs once (beforeAll) and `close` once (afterAll). Every test creates its
 * PrepareKey under a fresh unique name, so tests never see each other's records and the
 * suite can run against a shared server.
 *
 * ```ts
 * describePrepareKeyContract('redis', async () => {
 *   const redis = new Redis(url);
 *   return { factory: new RedisPrepareKeyFactory(redis), close: async () => void redis.disconnect() };
 * });
 * ```
 */
export function describePrepareKeyContract(
  label: string,
  setup: () => PrepareKeyContractTarget | Promise<PrepareKeyContractTarget>,
  options: PrepareKeyContractOptions = {},
): void {
  describe(`PrepareKey contract: ${label}`, () => {
    let target: PrepareKeyContractTarget | undefined;
    const run = randomUUID().slice(0, 8);
    let sequence = 0;

    beforeAll(async () => {
      target = await setup();
    });

    afterAll(async () => {
      await target?.close?.();
    });

    function uniqueName(): string {
      return `pkc_${run}_${++sequence}`;
    }

    function factory(): PrepareKeyFactory {
      if (!target) throw new Error('describePrepareKeyContract: setup did not return a target');
      return target.factory;
    }

    function fresh<V = Owner>(name = uniqueName()): PrepareKey<V> {
      return factory().create<V>(name);
    }

    /** Reserves every entry with one short TTL and waits until all of them have expired. */
    async function prepareExpired<V>(pk: PrepareKey<V>, entries: Array<[string, V]>): Promise<number> {
      const ttlAt = Date.now() + SHORT_TTL_MS;
      for (const [key, value] of entries) {
        expect(await pk.prepare(key, toTtlAt(value, ttlAt))).toBe(true);
      }
      await sleep(Math.max(0, ttlAt - Date.now()) + EXPIRY_MARGIN_MS);
      return ttlAt;
    }

    async function listAll<V>(pk: PrepareKey<V>, pageSize?: number): Promise<Array<PreparedRecord<V>>> {
      const out: Array<PreparedRecord<V>> = [];
      for await (const record of pk.records(pageSize === undefined ? {} : { pageSize })) out.push(record);
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    }

    async function snapshot<V>(pk: PrepareKey<V>): Promise<Array<{ key: string; value: V; ttlAt: number }>> {
      return (await listAll(pk)).map((r) => ({ key: r.key, value: r.value.value, ttlAt: r.value.ttlAt }));
    }

    it('creates a PrepareKey that carries its name', () => {
      const name = uniqueName();
      const pk = factory().create(name);
      expect(pk).toBeInstanceOf(PrepareKey);
      expect(pk.name).toBe(name);
    });

    it('two PrepareKeys created under one name share their records', async () => {
      const name = uniqueName();
      const a = factory().create<Owner>(name);
      const b = factory().create<Owner>(name);
      expect(await a.prepare('k', { owner: 'a' })).toBe(true);
      expect(await b.get('k')).toEqual({ owner: 'a' });
      expect(await b.prepare('k', { owner: 'b' })).toBe(false);
    });

    it('keeps different names apart, whatever the separators in names and keys', async () => {
      const base = uniqueName();
      const pairs: Array<[string, string]> = [
        [base, 'x:k'],
        [`${base}:x`, 'k'],
        [`${base}_x`, 'k'],
        [base, 'x_k'],
        [`${base}.x`, 'k'],
        [base, 'x.k'],
      ];
      for (const [name, key] of pairs) {
        expect(
          await factory()
            .create<Owner>(name)
            .prepare(key, { owner: `${name}/${key}` }),
        ).toBe(true);
      }
      for (const [name, key] of pairs) {
        expect(await factory().create<Owner>(name).get(key)).toEqual({ owner: `${name}/${key}` });
      }
      expect(await factory().create<Owner>(`${base}:x`).get('x:k')).toBeUndefined();
    });

    describe('prepare', () => {
      it('reserves an absent key forever and get returns the value', async () => {
        const pk = fresh();
        expect(await pk.prepare('alice', { owner: 'u1' })).toBe(true);
        expect(await pk.get('alice')).toEqual({ owner: 'u1' });
        const prepared = await pk.getValue('alice');
        expect(prepared).toBeInstanceOf(PreparedValue);
        expect(prepared?.value).toEqual({ owner: 'u1' });
        expect(prepared?.ttlAt).toBe(TTL_FOREVER);
        expect(prepared?.isForever).toBe(true);
        expect(prepared?.isExpired()).toBe(false);
      });

      it('stores the ttlAt of a PreparedValue', async () => {
        const pk = fresh();
        const ttlAt = Date.now() + 60_000;
        expect(await pk.prepare('alice', toTtlAt({ owner: 'u1' }, ttlAt))).toBe(true);
        const prepared = await pk.getValue('alice');
        expect(prepared?.ttlAt).toBe(ttlAt);
        expect(prepared?.isForever).toBe(false);
        expect(await pk.get('alice')).toEqual({ owner: 'u1' });
      });

      it('returns false while an unexpired record holds the key, whatever the value, and keeps it', async () => {
        const pk = fresh();
        expect(await pk.prepare('alice', { owner: 'u1' })).toBe(true);
        expect(await pk.prepare('alice', { owner: 'u2' })).toBe(false);
        expect(await pk.prepare('alice', { owner: 'u1' })).toBe(false); // the same value too
        expect(await pk.prepare('alice', toTtlAt({ owner: 'u1' }, Date.now() + 60_000))).toBe(false);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, TTL_FOREVER));
      });

      it('also refuses an equal value written with its object keys in another order', async () => {
        const pk = fresh<{ a: number; b: number }>();
        expect(await pk.prepare('k', { a: 1, b: 2 })).toBe(true);
        expect(await pk.prepare('k', { b: 2, a: 1 })).toBe(false);
      });

      it('reserves keys independently of each other', async () => {
        const pk = fresh();
        expect(await pk.prepare('alice', { owner: 'u1' })).toBe(true);
        expect(await pk.prepare('bob', { owner: 'u2' })).toBe(true);
        expect(await pk.get('alice')).toEqual({ owner: 'u1' });
        expect(await pk.get('bob')).toEqual({ owner: 'u2' });
      });
    });

    describe('get and getValue', () => {
      it('resolve undefined for an absent key', async () => {
        const pk = fresh();
        expect(await pk.get('nobody')).toBeUndefined();
        expect(await pk.getValue('nobody')).toBeUndefined();
      });

      it('return copies: mutating a value given or returned does not change the record', async () => {
        const pk = fresh<{ tags: string[] }>();
        const value = { tags: ['a'] };
        await pk.prepare('k', value);
        value.tags.push('mutated-after-prepare');
        const read = await pk.get('k');
        expect(read).toEqual({ tags: ['a'] });
        read!.tags.push('mutated-after-get');
        expect(await pk.get('k')).toEqual({ tags: ['a'] });
        expect((await pk.getValue('k'))?.value).toEqual({ tags: ['a'] });
      });
    });

    describe('expiry (short real TTLs)', () => {
      it('a TTL record holds the key until ttlAt, then get hides it and getValue still shows it', async () => {
        const pk = fresh();
        const ttlAt = Date.now() + SHORT_TTL_MS;
        expect(await pk.prepare('alice', toTtlAt({ owner: 'u1' }, ttlAt))).toBe(true);
        expect(await pk.get('alice')).toEqual({ owner: 'u1' });
        expect(await pk.prepare('alice', { owner: 'u2' })).toBe(false);

        await sleep(ttlAt - Date.now() + EXPIRY_MARGIN_MS);
        expect(await pk.get('alice')).toBeUndefined();
        const expired = await pk.getValue('alice');
        expect(expired?.value).toEqual({ owner: 'u1' });
        expect(expired?.ttlAt).toBe(ttlAt);
        expect(expired?.isExpired()).toBe(true);
      });

      it('an expired key can be prepared again, by another value or the same one', async () => {
        const pk = fresh();
        await prepareExpired(pk, [
          ['alice', { owner: 'u1' }],
          ['bob', { owner: 'u3' }],
        ]);
        expect(await pk.prepare('alice', { owner: 'u2' })).toBe(true);
        expect(await pk.get('alice')).toEqual({ owner: 'u2' });
        expect((await pk.getValue('alice'))?.ttlAt).toBe(TTL_FOREVER);
        expect(await pk.prepare('alice', { owner: 'u1' })).toBe(false);

        expect(await pk.prepare('bob', { owner: 'u3' })).toBe(true);
        expect(await pk.getValue('bob')).toEqual(new PreparedValue({ owner: 'u3' }, TTL_FOREVER));
      });

      it('a re-prepared TTL record expires again at its new ttlAt', async () => {
        const pk = fresh();
        await prepareExpired(pk, [['alice', { owner: 'u1' }]]);
        const second = await prepareExpired(pk, [['alice', { owner: 'u2' }]]);
        expect(await pk.get('alice')).toBeUndefined();
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u2' }, second));
        expect(await pk.prepare('alice', { owner: 'u3' })).toBe(true);
      });

      it('reprepare(key, value) extends a reservation before it expires', async () => {
        const pk = fresh();
        const ttlAt = Date.now() + SHORT_TTL_MS;
        expect(await pk.prepare('alice', toTtlAt({ owner: 'u1' }, ttlAt))).toBe(true);
        const later = Date.now() + 60_000;
        expect(await pk.reprepare('alice', toTtlAt({ owner: 'u1' }, later))).toBe(true);
        await sleep(ttlAt - Date.now() + EXPIRY_MARGIN_MS);
        expect(await pk.get('alice')).toEqual({ owner: 'u1' });
        expect((await pk.getValue('alice'))?.ttlAt).toBe(later);
        expect(await pk.prepare('alice', { owner: 'u2' })).toBe(false);
      });
    });

    describe('rollback(key)', () => {
      it('deletes the record whatever its value and resolves true, then false', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        expect(await pk.rollback('alice')).toBe(true);
        expect(await pk.getValue('alice')).toBeUndefined();
        expect(await pk.rollback('alice')).toBe(false);
        expect(await pk.prepare('alice', { owner: 'u2' })).toBe(true);
      });

      it('resolves false for an absent key', async () => {
        expect(await fresh().rollback('nobody')).toBe(false);
      });

      it('deletes an expired record too', async () => {
        const pk = fresh();
        await prepareExpired(pk, [['alice', { owner: 'u1' }]]);
        expect(await pk.rollback('alice')).toBe(true);
        expect(await pk.getValue('alice')).toBeUndefined();
      });

      it('touches only its own key', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        await pk.prepare('bob', { owner: 'u2' });
        expect(await pk.rollback('alice')).toBe(true);
        expect(await pk.get('bob')).toEqual({ owner: 'u2' });
      });
    });

    describe('rollback(key, value)', () => {
      it('deletes the record whose value equals value', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        expect(await pk.rollback('alice', { owner: 'u1' })).toBe(true);
        expect(await pk.getValue('alice')).toBeUndefined();
      });

      it('resolves false for another value and leaves the record intact', async () => {
        const pk = fresh();
        const ttlAt = Date.now() + 60_000;
        await pk.prepare('alice', toTtlAt({ owner: 'u1' }, ttlAt));
        expect(await pk.rollback('alice', { owner: 'u2' })).toBe(false);
        expect(await pk.rollback('alice', { owner: 'u1', n: 1 })).toBe(false);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, ttlAt));
      });

      it('resolves false for an absent key', async () => {
        expect(await fresh().rollback('nobody', { owner: 'u1' })).toBe(false);
      });

      it('deletes an expired record whose value matches', async () => {
        const pk = fresh();
        await prepareExpired(pk, [
          ['alice', { owner: 'u1' }],
          ['bob', { owner: 'u2' }],
        ]);
        expect(await pk.rollback('alice', { owner: 'u1' })).toBe(true);
        expect(await pk.getValue('alice')).toBeUndefined();
        expect(await pk.rollback('bob', { owner: 'other' })).toBe(false);
        expect((await pk.getValue('bob'))?.value).toEqual({ owner: 'u2' });
      });
    });

    describe('reprepare(key, value)', () => {
      it('replaces value and ttlAt of an unexpired record', async () => {
        const pk = fresh();
        await pk.prepare('alice', toTtlAt({ owner: 'u1' }, Date.now() + 60_000));
        expect(await pk.reprepare('alice', { owner: 'u2' })).toBe(true);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u2' }, TTL_FOREVER));
        const ttlAt = Date.now() + 120_000;
        expect(await pk.reprepare('alice', toTtlAt({ owner: 'u3' }, ttlAt))).toBe(true);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u3' }, ttlAt));
      });

      it('resolves false for an absent key and creates nothing', async () => {
        const pk = fresh();
        expect(await pk.reprepare('nobody', { owner: 'u1' })).toBe(false);
        expect(await pk.getValue('nobody')).toBeUndefined();
      });

      it('resolves false for an expired record and leaves it as it was', async () => {
        const pk = fresh();
        const ttlAt = await prepareExpired(pk, [['alice', { owner: 'u1' }]]);
        expect(await pk.reprepare('alice', { owner: 'u2' })).toBe(false);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, ttlAt));
      });
    });

    describe('reprepare(key, oldValue, newValue)', () => {
      it('replaces the value when the current one equals oldValue', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        const ttlAt = Date.now() + 60_000;
        expect(await pk.reprepare('alice', { owner: 'u1' }, toTtlAt({ owner: 'u2' }, ttlAt))).toBe(true);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u2' }, ttlAt));
        expect(await pk.reprepare('alice', { owner: 'u2' }, { owner: 'u3' })).toBe(true);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u3' }, TTL_FOREVER));
      });

      it('resolves false for another current value and leaves the record unchanged', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        expect(await pk.reprepare('alice', { owner: 'u9' }, { owner: 'u2' })).toBe(false);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, TTL_FOREVER));
      });

      it('resolves false for an absent key and creates nothing', async () => {
        const pk = fresh();
        expect(await pk.reprepare('nobody', { owner: 'u1' }, { owner: 'u2' })).toBe(false);
        expect(await pk.getValue('nobody')).toBeUndefined();
      });

      it('replaces an expired record whose value equals oldValue (the condition is the value)', async () => {
        const pk = fresh();
        await prepareExpired(pk, [['alice', { owner: 'u1' }]]);
        expect(await pk.reprepare('alice', { owner: 'u1' }, { owner: 'u2' })).toBe(true);
        expect(await pk.get('alice')).toEqual({ owner: 'u2' });
      });
    });

    describe('reprepare(oldKey, oldValue, newKey, newValue): key change', () => {
      it('moves the reservation: newKey held by newValue, oldKey released', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        const ttlAt = Date.now() + 60_000;
        expect(await pk.reprepare('alice', { owner: 'u1' }, 'alicia', toTtlAt({ owner: 'u1', n: 2 }, ttlAt))).toBe(
          true,
        );
        expect(await pk.getValue('alice')).toBeUndefined();
        expect(await pk.getValue('alicia')).toEqual(new PreparedValue({ owner: 'u1', n: 2 }, ttlAt));
      });

      it('resolves false when newKey is held, leaving both keys untouched', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        await pk.prepare('bob', { owner: 'u2' });
        expect(await pk.reprepare('alice', { owner: 'u1' }, 'bob', { owner: 'u1' })).toBe(false);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, TTL_FOREVER));
        expect(await pk.getValue('bob')).toEqual(new PreparedValue({ owner: 'u2' }, TTL_FOREVER));
      });

      it('takes a newKey whose record has expired', async () => {
        const pk = fresh();
        await prepareExpired(pk, [['bob', { owner: 'u2' }]]);
        await pk.prepare('alice', { owner: 'u1' });
        expect(await pk.reprepare('alice', { owner: 'u1' }, 'bob', { owner: 'u1' })).toBe(true);
        expect(await pk.get('bob')).toEqual({ owner: 'u1' });
        expect(await pk.getValue('alice')).toBeUndefined();
      });

      it('rejects with PrepareKeyStateError when oldKey holds another value, and releases newKey', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u9' });
        const change = pk.reprepare('alice', { owner: 'u1' }, 'alicia', { owner: 'u1' });
        await expect(change).rejects.toBeInstanceOf(PrepareKeyStateError);
        await expect(change).rejects.toThrow(/alice/);
        await expect(change).rejects.toMatchObject({ newKeyReleased: true });
        expect(await pk.getValue('alicia')).toBeUndefined();
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u9' }, TTL_FOREVER));
      });

      it('rejects with PrepareKeyStateError when oldKey is absent, and keeps newKey: neither key held never happens', async () => {
        const pk = fresh();
        const change = pk.reprepare('ghost', { owner: 'u1' }, 'alicia', { owner: 'u1' });
        await expect(change).rejects.toBeInstanceOf(PrepareKeyStateError);
        await expect(change).rejects.toMatchObject({ newKeyReleased: false });
        expect(await pk.get('alicia')).toEqual({ owner: 'u1' });
        expect(await pk.getValue('ghost')).toBeUndefined();
      });

      it('keeps newKey when oldKey holds another value whose record has expired (nobody holds oldKey)', async () => {
        const pk = fresh();
        await prepareExpired(pk, [['alice', { owner: 'u9' }]]);
        await expect(pk.reprepare('alice', { owner: 'u1' }, 'alicia', { owner: 'u1' })).rejects.toMatchObject({
          newKeyReleased: false,
        });
        expect(await pk.get('alicia')).toEqual({ owner: 'u1' });
      });

      it('rejects oldKey === newKey with an argument error before touching anything', async () => {
        const pk = fresh();
        await expect(pk.reprepare('alice', { owner: 'u1' }, 'alice', { owner: 'u2' })).rejects.toBeInstanceOf(
          PrepareKeyArgumentError,
        );
        expect(await pk.getValue('alice')).toBeUndefined(); // an absent key was not taken
        await pk.prepare('bob', { owner: 'u1' });
        await expect(pk.reprepare('bob', { owner: 'u1' }, 'bob', { owner: 'u2' })).rejects.toThrow(/reprepare/);
        expect(await snapshot(pk)).toEqual([{ key: 'bob', value: { owner: 'u1' }, ttlAt: TTL_FOREVER }]);
      });
    });

    describe('usingPrepare', () => {
      it('passes true to then, resolves what then resolves, and keeps the reservation', async () => {
        const pk = fresh();
        const seen: boolean[] = [];
        const result = await pk.usingPrepare('alice', { owner: 'u1' }, async (prepared) => {
          seen.push(prepared);
          return 'registered';
        });
        expect(result).toBe('registered');
        expect(seen).toEqual([true]);
        expect(await pk.get('alice')).toEqual({ owner: 'u1' });
        expect(await pk.prepare('alice', { owner: 'u2' })).toBe(false);
      });

      it('passes false to then when the key is held, and resolves what then resolves', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        const seen: boolean[] = [];
        const result = await pk.usingPrepare('alice', { owner: 'u2' }, (prepared) => {
          seen.push(prepared);
          return prepared ? 'mine' : 'taken';
        });
        expect(result).toBe('taken');
        expect(seen).toEqual([false]);
        expect(await pk.get('alice')).toEqual({ owner: 'u1' });
      });

      it('rolls back when prepared and then rejects, and propagates the original error', async () => {
        const pk = fresh();
        const original = new Error('append failed');
        await expect(
          pk.usingPrepare('alice', { owner: 'u1' }, async () => {
            throw original;
          }),
        ).rejects.toBe(original);
        expect(await pk.getValue('alice')).toBeUndefined();
        expect(await pk.prepare('alice', { owner: 'u2' })).toBe(true);
      });

      it('rolls back when prepared and then throws synchronously, with a TTL value too', async () => {
        const pk = fresh();
        const original = new Error('invalid command');
        await expect(
          pk.usingPrepare('alice', toTtlAt({ owner: 'u1' }, Date.now() + 60_000), () => {
            throw original;
          }),
        ).rejects.toBe(original);
        expect(await pk.getValue('alice')).toBeUndefined();
      });

      it('does not roll back when not prepared and then throws: the holder keeps the key', async () => {
        const pk = fresh();
        await pk.prepare('alice', { owner: 'u1' });
        const original = new Error('username is already reserved');
        await expect(
          pk.usingPrepare('alice', { owner: 'u1' }, (prepared) => {
            if (!prepared) throw original;
            return 'unexpected';
          }),
        ).rejects.toBe(original);
        expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, TTL_FOREVER));
      });

      it("rolls back conditionally: a record another owner took meanwhile survives then's failure", async () => {
        const pk = fresh();
        const original = new Error('late failure');
        await expect(
          pk.usingPrepare('alice', { owner: 'u1' }, async () => {
            await pk.rollback('alice');
            await pk.prepare('alice', { owner: 'u2' });
            throw original;
          }),
        ).rejects.toBe(original);
        expect(await pk.get('alice')).toEqual({ owner: 'u2' });
      });

      it('propagates the rollback error when the rollback itself fails', async () => {
        const inner = fresh();
        const rollbackFailure = new Error('backend unavailable during rollback');
        const pk = new RollbackFailingPrepareKey(inner, rollbackFailure);
        await expect(
          pk.usingPrepare('alice', { owner: 'u1' }, async () => {
            throw new Error('append failed');
          }),
        ).rejects.toBe(rollbackFailure);
        expect(pk.rollbackAttempts).toBe(1);
        // The release failed, so the reservation is still there.
        expect(await inner.get('alice')).toEqual({ owner: 'u1' });

        // Not prepared: no rollback is attempted, the original error propagates.
        const original = new Error('taken');
        await expect(
          pk.usingPrepare('alice', { owner: 'u2' }, () => {
            throw original;
          }),
        ).rejects.toBe(original);
        expect(pk.rollbackAttempts).toBe(1);
      });

      it('does not call then when prepare rejects on bad input', async () => {
        const pk = fresh();
        let called = false;
        await expect(
          pk.usingPrepare('', { owner: 'u1' }, () => {
            called = true;
          }),
        ).rejects.toBeInstanceOf(PrepareKeyArgumentError);
        expect(called).toBe(false);
      });
    });

    describe('canonical equality', () => {
      type Doc = { a: number; b: { c: number[]; d: { x: number; y: string } } };
      const doc: Doc = { a: 1, b: { c: [1, 2], d: { x: 1, y: 'z' } } };
      const reordered = { b: { d: { y: 'z', x: 1 }, c: [1, 2] }, a: 1 } as Doc;
      const arrayReversed = { a: 1, b: { c: [2, 1], d: { x: 1, y: 'z' } } } as Doc;

      it('{a:1,b:2} equals {b:2,a:1} in conditional rollback, nested objects included', async () => {
        const pk = fresh<Doc>();
        await pk.prepare('k', doc);
        expect(await pk.rollback('k', arrayReversed)).toBe(false); // array order is significant
        expect(await pk.rollback('k', reordered)).toBe(true);
        expect(await pk.getValue('k')).toBeUndefined();
      });

      it('in reprepare(key, oldValue, newValue)', async () => {
        const pk = fresh<Doc>();
        await pk.prepare('k', doc);
        expect(await pk.reprepare('k', arrayReversed, { ...doc, a: 2 })).toBe(false);
        expect(await pk.reprepare('k', reordered, { ...doc, a: 2 })).toBe(true);
        expect(await pk.get('k')).toEqual({ ...doc, a: 2 });
      });

      it('in the key change', async () => {
        const pk = fresh<Doc>();
        await pk.prepare('k', doc);
        expect(await pk.reprepare('k', reordered, 'k2', doc)).toBe(true);
        expect(await pk.get('k2')).toEqual(doc);
        expect(await pk.getValue('k')).toBeUndefined();
      });

      it('in the rollback usingPrepare performs', async () => {
        const pk = fresh<Doc>();
        await expect(
          pk.usingPrepare('k', reordered, () => {
            throw new Error('no');
          }),
        ).rejects.toThrow('no');
        expect(await pk.getValue('k')).toBeUndefined();
      });
    });

    describe('values and keys', () => {
      const values: Array<[string, unknown]> = [
        ['a nested object', { id: 'u-1', profile: { name: 'Zoë', tags: ['a', 'b'], active: true }, n: null }],
        ['an array', [1, 'two', { three: 3 }, [4], null, false]],
        ['an empty object', {}],
        ['an empty array', []],
        ['a unicode string', 'Zoë 李雷 🚀 Ω\u0301 "quoted" \\ back\nslash'],
        ['an empty string', ''],
        ['an integer', 42],
        ['a negative fraction', -12.5],
        ['a large number', 1.5e300],
        ['zero', 0],
        ['null', null],
        ['true', true],
        ['false', false],
        ['an object with keys needing escapes', { 'a.b': 1, $ne: null, 'c:d': { '{e}': '%f' } }],
      ];

      it.each(values)('round-trips %s', async (_, value) => {
        const pk = fresh<unknown>();
        expect(await pk.prepare('k', value)).toBe(true);
        expect(await pk.get('k')).toEqual(value);
        expect((await pk.getValue('k'))?.value).toEqual(value);
        expect(await pk.rollback('k', value)).toBe(true);
      });

      it('falsy values still hold their key (null, false, 0, empty string)', async () => {
        const pk = fresh<unknown>();
        for (const [i, value] of [null, false, 0, ''].entries()) {
          expect(await pk.prepare(`k${i}`, value)).toBe(true);
          expect(await pk.prepare(`k${i}`, 'other')).toBe(false);
          expect(await pk.getValue(`k${i}`)).toEqual(new PreparedValue(value, TTL_FOREVER));
        }
      });

      it('keeps keys with special characters distinct from each other', async () => {
        const keys = [
          'a.b',
          'a:b',
          'a{b}',
          '{a}b',
          '{a}',
          'a}',
          '{',
          '}',
          'a%b',
          'a%25b',
          '%',
          'a b',
          ' a',
          'a ',
          'a',
          'A',
          'a/b',
          'a\\b',
          'a\nb',
          'a\tb',
          "a'b",
          'a"b',
          '$ne',
          '$a.b',
          'a*',
          'a?',
          '[a]',
          'ключ',
          '键',
          '🔑',
          'e\u0301',
          '\u00e9',
          'a\u0000b',
          'a\u0000',
          'x'.repeat(1024),
          `${'é'.repeat(1023)}🔑`,
        ];
        expect(new Set(keys).size).toBe(keys.length);
        const pk = fresh<{ key: string }>();
        for (const key of keys) expect(await pk.prepare(key, { key })).toBe(true);
        for (const key of keys) expect(await pk.get(key)).toEqual({ key });
        expect((await snapshot(pk)).map((r) => r.key).sort()).toEqual([...keys].sort());
        for (const key of keys) expect(await pk.rollback(key, { key })).toBe(true);
        expect(await snapshot(pk)).toEqual([]);
      });
    });

    describe('bad input rejects with a clear error and writes nothing', () => {
      const sentinelValue: Owner = { owner: 'sentinel' };
      const sentinelTtl = Date.now() + 3_600_000;

      async function withSentinel(): Promise<PrepareKey<Owner>> {
        const pk = fresh();
        expect(await pk.prepare('sentinel', toTtlAt(sentinelValue, sentinelTtl))).toBe(true);
        return pk;
      }

      async function expectUntouched(pk: PrepareKey<Owner>): Promise<void> {
        expect(await snapshot(pk)).toEqual([{ key: 'sentinel', value: sentinelValue, ttlAt: sentinelTtl }]);
        expect(await pk.getValue('sentinel')).toEqual(new PreparedValue(sentinelValue, sentinelTtl));
      }

      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;

      const badKeys: Array<[string, unknown]> = [
        ['a number', 42],
        ['null', null],
        ['undefined', undefined],
        ['a query-operator object { $ne: null }', { $ne: null }],
        ['a query-operator object { $gt: "" }', { $gt: '' }],
        ['an array', ['sentinel']],
        ['a String object', new String('sentinel')],
        ['the empty string', ''],
        ['a 1,025-character string', 'k'.repeat(1025)],
        ['a lone surrogate', 'a\uD800'],
      ];

      it('accepts a key of exactly 1,024 characters', async () => {
        const pk = fresh();
        expect(await pk.prepare('k'.repeat(1024), { owner: 'u1' })).toBe(true);
        expect(await pk.get('k'.repeat(1024))).toEqual({ owner: 'u1' });
      });

      it.each(badKeys)('key: %s', async (_, badKey) => {
        const pk = await withSentinel();
        const key = badKey as string;
        let thenCalled = false;
        const attempts: Array<() => Promise<unknown>> = [
          () => pk.prepare(key, { owner: 'u1' }),
          () => pk.get(key),
          () => pk.getValue(key),
          () => pk.rollback(key),
          () => pk.rollback(key, sentinelValue),
          () => pk.reprepare(key, { owner: 'u1' }),
          () => pk.reprepare(key, sentinelValue, { owner: 'u1' }),
          () => pk.reprepare(key, sentinelValue, 'fresh-key', { owner: 'u1' }),
          () => pk.reprepare('sentinel', sentinelValue, key, { owner: 'u1' }),
          () => pk.usingPrepare(key, { owner: 'u1' }, () => (thenCalled = true)),
        ];
        for (const attempt of attempts) {
          await expect(attempt()).rejects.toBeInstanceOf(PrepareKeyArgumentError);
          await expect(attempt()).rejects.toThrow(/key/i);
        }
        expect(thenCalled).toBe(false);
        await expectUntouched(pk);
      });

      const badValues: Array<[string, unknown]> = [
        ['undefined', undefined],
        ['a function', () => 1],
        ['a symbol', Symbol('s')],
        ['a BigInt', 10n],
        ['a cyclic object', cyclic],
        ['an object holding a function', { f: () => 1 }],
        ['an object holding a BigInt', { n: 1n }],
        ['an array holding a symbol', [Symbol('s')]],
      ];

      it.each(badValues)('value: %s', async (_, badValue) => {
        const pk = await withSentinel();
        const bad = badValue as Owner;
        let thenCalled = false;
        const attempts: Array<() => Promise<unknown>> = [
          () => pk.prepare('fresh-key', bad),
          () => pk.prepare('fresh-key', toTtlAt(bad, Date.now() + 60_000)),
          () => pk.rollback('sentinel', bad),
          () => pk.reprepare('sentinel', bad),
          () => pk.reprepare('sentinel', sentinelValue, bad),
          () => pk.reprepare('sentinel', bad, sentinelValue),
          () => pk.reprepare('sentinel', sentinelValue, 'fresh-key', bad),
          () => pk.reprepare('sentinel', bad, 'fresh-key', sentinelValue),
          () => pk.usingPrepare('fresh-key', bad, () => (thenCalled = true)),
        ];
        for (const attempt of attempts) {
          await expect(attempt()).rejects.toBeInstanceOf(PrepareKeyArgumentError);
          await expect(attempt()).rejects.toThrow(/value/i);
        }
        expect(thenCalled).toBe(false);
        await expectUntouched(pk);
      });

      const badTtls: Array<[string, unknown]> = [
        ['NaN', Number.NaN],
        ['Infinity', Number.POSITIVE_INFINITY],
        ['-Infinity', Number.NEGATIVE_INFINITY],
        ['a fraction', Date.now() + 60_000.5],
        ['1.5', 1.5],
        ["the string '1'", '1'],
        ['null', null],
        ['undefined', undefined],
      ];

      it.each(badTtls)('ttlAt: %s', async (_, badTtl) => {
        const pk = await withSentinel();
        const ttlAt = badTtl as number;
        let thenCalled = false;
        const attempts: Array<() => Promise<unknown>> = [
          () => pk.prepare('fresh-key', toTtlAt({ owner: 'u1' }, ttlAt)),
          () => pk.reprepare('sentinel', toTtlAt({ owner: 'u1' }, ttlAt)),
          () => pk.reprepare('sentinel', sentinelValue, toTtlAt({ owner: 'u1' }, ttlAt)),
          () => pk.reprepare('sentinel', sentinelValue, 'fresh-key', toTtlAt({ owner: 'u1' }, ttlAt)),
          () => pk.usingPrepare('fresh-key', toTtlAt({ owner: 'u1' }, ttlAt), () => (thenCalled = true)),
        ];
        for (const attempt of attempts) {
          await expect(attempt()).rejects.toBeInstanceOf(PrepareKeyArgumentError);
          await expect(attempt()).rejects.toThrow(/ttlAt/);
        }
        expect(thenCalled).toBe(false);
        await expectUntouched(pk);
      });

      it('records() rejects a pageSize that is not a positive integer', async () => {
        const pk = await withSentinel();
        for (const pageSize of [0, -1, 1.5, Number.NaN]) {
          await expect(listAll(pk, pageSize)).rejects.toBeInstanceOf(PrepareKeyArgumentError);
        }
      });
    });

    describe('records()', () => {
      it('lists nothing for an empty name', async () => {
        expect(await listAll(fresh())).toEqual([]);
      });

      it('yields every record exactly once across pages, expired ones included', async () => {
        const pk = fresh();
        const expiredKeys = ['e1', 'e2', 'e3'];
        const expiredTtl = await prepareExpired(
          pk,
          expiredKeys.map((key): [string, Owner] => [key, { owner: key }]),
        );
        const liveTtl = Date.now() + 600_000;
        const liveKeys = ['a', 'b:1', 'c{x}', 'd.d', 'é', '🔑', 'g h'];
        for (const [i, key] of liveKeys.entries()) {
          await pk.prepare(key, i % 2 ? { owner: key } : toTtlAt({ owner: key }, liveTtl));
        }
        const expected = [
          ...expiredKeys.map((key) => ({ key, value: { owner: key }, ttlAt: expiredTtl })),
          ...liveKeys.map((key, i) => ({ key, value: { owner: key }, ttlAt: i % 2 ? TTL_FOREVER : liveTtl })),
        ].sort((a, b) => (a.key < b.key ? -1 : 1));

        for (const pageSize of [1, 3, 10, 11, 1000]) {
          const seen: string[] = [];
          const records: Array<{ key: string; value: Owner; ttlAt: number }> = [];
          for await (const record of pk.records({ pageSize })) {
            expect(record.value).toBeInstanceOf(PreparedValue);
            seen.push(record.key);
            records.push({ key: record.key, value: record.value.value, ttlAt: record.value.ttlAt });
          }
          expect(new Set(seen).size).toBe(seen.length); // exactly once
          expect(records.sort((a, b) => (a.key < b.key ? -1 : 1))).toEqual(expected);
        }
        expect(await snapshot(pk)).toEqual(expected); // default page size
      });

      it('lists only its own name', async () => {
        const a = fresh();
        const b = fresh();
        await a.prepare('k', { owner: 'a' });
        await b.prepare('k2', { owner: 'b' });
        expect((await snapshot(a)).map((r) => r.key)).toEqual(['k']);
      });

      it('lists a larger key space page by page', async () => {
        const pk = fresh<number>();
        const keys = Array.from({ length: 120 }, (_, i) => `key-${i}`);
        await Promise.all(keys.map((key, i) => pk.prepare(key, i)));
        const seen: string[] = [];
        for await (const record of pk.records({ pageSize: 7 })) seen.push(record.key);
        expect(seen.length).toBe(keys.length);
        expect([...seen].sort()).toEqual([...keys].sort());
      });
    });

    if (options.faults !== undefined && options.faults.length > 0) {
      describePrepareKeyFaults(
        options.faults,
        () => {
          if (!target?.faults)
            throw new Error(
              `describePrepareKeyContract('${label}'): faults are listed but setup returned no faults target`,
            );
          return { clean: factory(), faults: target.faults };
        },
        uniqueName,
      );
    }

    describe('concurrency', () => {
      async function race(pk: PrepareKey<Owner>, key: string): Promise<void> {
        const results = await Promise.all(
          Array.from({ length: RACERS }, (_, i) => pk.prepare(key, { owner: `racer-${i}` })),
        );
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(await pk.get(key)).toEqual({ owner: `racer-${winners[0]}` });
      }

      it(`${RACERS} concurrent prepare calls on one key: exactly one winner, whose value get returns`, async () => {
        await race(fresh(), 'contended');
      });

      it(`${RACERS} concurrent prepare calls on an expired key: exactly one winner`, async () => {
        const pk = fresh();
        await prepareExpired(pk, [['contended', { owner: 'former' }]]);
        await race(pk, 'contended');
      });

      it('concurrent prepare calls through two PrepareKeys of one name: exactly one winner', async () => {
        const name = uniqueName();
        const a = factory().create<Owner>(name);
        const b = factory().create<Owner>(name);
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).prepare('contended', { owner: `racer-${i}` })),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('concurrent reprepare(key, old, new): exactly one replaces', async () => {
        const pk = fresh();
        await pk.prepare('k', { owner: 'v0' });
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => pk.reprepare('k', { owner: 'v0' }, { owner: `v${i + 1}` })),
        );
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(await pk.get('k')).toEqual({ owner: `v${winners[0] + 1}` });
      });

      it('concurrent conditional rollbacks: exactly one deletes', async () => {
        const pk = fresh();
        await pk.prepare('k', { owner: 'v0' });
        const results = await Promise.all(Array.from({ length: 50 }, () => pk.rollback('k', { owner: 'v0' })));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await pk.getValue('k')).toBeUndefined();
      });

      it('concurrent key changes to one new key: exactly one moves, the others keep their old keys', async () => {
        const pk = fresh();
        const owners = Array.from({ length: 30 }, (_, i) => `old-${i}`);
        for (const owner of owners) await pk.prepare(owner, { owner });
        const results = await Promise.all(owners.map((owner) => pk.reprepare(owner, { owner }, 'target', { owner })));
        const winners = results.flatMap((won, i) => (won ? [owners[i]] : []));
        expect(winners).toHaveLength(1);
        expect(await pk.get('target')).toEqual({ owner: winners[0] });
        expect(await pk.getValue(winners[0])).toBeUndefined();
        for (const owner of owners.filter((o) => o !== winners[0])) {
          expect(await pk.get(owner)).toEqual({ owner });
        }
      });

      it('concurrent usingPrepare on one key: then sees true exactly once', async () => {
        const pk = fresh();
        const seen = await Promise.all(
          Array.from({ length: 50 }, (_, i) => pk.usingPrepare('k', { owner: `c${i}` }, (prepared) => prepared)),
        );
        expect(seen.filter(Boolean)).toHaveLength(1);
      });
    });
  });
}

/**
 * Forwards every primitive to a real backend key, except that `doRollback` fails: the only
 * portable way to make a backend's rollback fail on demand.
 */
class RollbackFailingPrepareKey<V> extends PrepareKey<V> {
  readonly name: string;
  rollbackAttempts = 0;

  constructor(
    private readonly inner: PrepareKey<V>,
    private readonly failure: Error,
  ) {
    super();
    this.name = inner.name;
  }

  protected override now(): number {
    return primitivesOf(this.inner).now();
  }

  protected doPrepare(key: string, value: string, ttlAt: number, op: string) {
    return primitivesOf(this.inner).doPrepare(key, value, ttlAt, op);
  }

  protected doGetValue(key: string) {
    return primitivesOf(this.inner).doGetValue(key);
  }

  protected async doRollback(): Promise<boolean> {
    this.rollbackAttempts++;
    throw this.failure;
  }

  protected doReprepare(key: string, value: string, ttlAt: number, op: string, expected?: string) {
    return primitivesOf(this.inner).doReprepare(key, value, ttlAt, op, expected);
  }

  protected doListPage(cursor: string | undefined, pageSize: number) {
    return primitivesOf(this.inner).doListPage(cursor, pageSize);
  }
}
