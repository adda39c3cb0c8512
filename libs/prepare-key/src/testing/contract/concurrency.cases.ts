import { describe, expect, it } from '@jest/globals';
import type { PrepareKey } from '../../prepare-key.js';
import { RACERS, type ContractContext, type Owner } from './contract-context.js';

/** Cases of describePrepareKeyContract (see prepare-key.contract.ts). */
export function describeConcurrencyCases(context: ContractContext): void {
  const { factory, fresh, uniqueName, expired } = context;
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

    const expiredContended = expired([['contended', { owner: 'former' }]]);
    it(`${RACERS} concurrent prepare calls on an expired key: exactly one winner`, async () => {
      const { pk } = expiredContended();
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
}
