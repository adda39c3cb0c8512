import { describe, expect, it } from '@jest/globals';
import { PreparedValue, TTL_FOREVER, toTtlAt } from '../../prepared-value.js';
import type { ContractContext, Owner } from './contract-context.js';

/** Cases of describePrepareKeyContract (see prepare-key.contract.ts). */
export function describeRecordCases(context: ContractContext): void {
  const { fresh, now, expired, listAll, snapshot } = context;
  describe('records()', () => {
    it('lists nothing for an empty name', async () => {
      expect(await listAll(fresh())).toEqual([]);
    });

    const expiredKeys = ['e1', 'e2', 'e3'];
    const withExpired = expired(expiredKeys.map((key): [string, Owner] => [key, { owner: key }]));
    it('yields every record exactly once across pages, expired ones included', async () => {
      const { pk, result: expiredTtl } = withExpired();
      const liveTtl = now() + 600_000;
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
}
