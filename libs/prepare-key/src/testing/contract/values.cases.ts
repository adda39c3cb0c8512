import { describe, expect, it } from '@jest/globals';
import { PrepareKeyArgumentError } from '../../errors.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PreparedValue, TTL_FOREVER, toTtlAt } from '../../prepared-value.js';
import type { ContractContext, Owner } from './contract-context.js';

/** Cases of describePrepareKeyContract (see prepare-key.contract.ts). */
export function describeValueCases(context: ContractContext): void {
  const { fresh, now, listAll, snapshot } = context;
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
    const sentinelTtl = now() + 3_600_000;

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
      ['a string holding U+0000', 'A\u0000B'],
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
        () => pk.prepare('fresh-key', toTtlAt(bad, now() + 60_000)),
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
      ['a fraction', now() + 60_000.5],
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
}
