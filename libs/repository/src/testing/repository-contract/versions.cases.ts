import { describe, expect, it } from '@jest/globals';
import { AggregateStateError } from '../../errors.js';
import { Counter } from '../counter.aggregate.js';
import type { RepositoryContractContext } from './contract-context.js';

/** Cases of describeRepositoryContract (see ../repository.contract.ts). */
export function describeVersionCases(context: RepositoryContractContext): void {
  const { fixture, stored } = context;
  describe('versions', () => {
    it('insert stores version 1 and advances the instance to oldVersion 1 / newVersion 2', async () => {
      const f = fixture();
      const counter = new Counter('a', 'first');
      expect([counter.isNew(), counter.oldVersion, counter.newVersion]).toEqual([true, 0, 1]);
      await f.repository.insert(counter);
      expect([counter.isNew(), counter.oldVersion, counter.newVersion]).toEqual([false, 1, 2]);
      expect(await f.repository.currentVersion('a')).toBe(1);
    });

    it('findById returns a copy at the stored version (old = stored, new = stored + 1), or null', async () => {
      const f = fixture();
      const counter = await stored(f, 'x');
      counter.increment(5);
      counter.tags.push('t');
      await f.repository.update(counter);
      const loaded = await f.repository.findById(counter.id);
      expect(loaded).toBeInstanceOf(Counter);
      expect(loaded).not.toBe(counter);
      expect([loaded!.oldVersion, loaded!.newVersion, loaded!.isNew()]).toEqual([2, 3, false]);
      expect({ id: loaded!.id, label: loaded!.label, count: loaded!.count, tags: loaded!.tags }).toEqual({
        id: counter.id,
        label: 'x',
        count: 5,
        tags: ['t'],
      });
      // Changing the loaded copy changes nothing stored until a write.
      loaded!.tags.push('local');
      loaded!.increment();
      const again = await f.repository.findById(counter.id);
      expect([again!.count, again!.tags]).toEqual([5, ['t']]);
      expect(await f.repository.findById('missing')).toBeNull();
    });

    it('the same instance can be written again and again: each write advances both versions', async () => {
      const f = fixture();
      const counter = await stored(f, 'loop');
      for (let i = 1; i <= 5; i++) {
        counter.increment();
        await f.repository.update(counter);
        expect([counter.oldVersion, counter.newVersion]).toEqual([i + 1, i + 2]);
      }
      expect(await f.repository.currentVersion(counter.id)).toBe(6);
      expect((await f.repository.findById(counter.id))!.count).toBe(5);
    });

    it('currentVersion is -1 and existsById false for a missing aggregate, without throwing', async () => {
      const f = fixture();
      await expect(f.repository.currentVersion('never')).resolves.toBe(-1);
      await expect(f.repository.existsById('never')).resolves.toBe(false);
      await stored(f, 'here', 'here');
      await expect(f.repository.existsById('here')).resolves.toBe(true);
    });

    it('save inserts a new aggregate and updates a stored one', async () => {
      const f = fixture();
      const counter = new Counter('s', 'saved');
      await f.repository.save(counter);
      expect(await f.repository.currentVersion('s')).toBe(1);
      const loaded = (await f.repository.findById('s'))!;
      loaded.increment();
      await f.repository.save(loaded);
      expect(await f.repository.currentVersion('s')).toBe(2);
      expect(f.published.map((e) => [e.type, e.version])).toEqual([
        ['UPSERT', 1],
        ['UPSERT', 2],
      ]);
    });

    it('refuses writes that do not fit the state: update/remove of a new aggregate, insert of a stored one', async () => {
      const f = fixture();
      await expect(f.repository.update(new Counter('n1', 'new'))).rejects.toBeInstanceOf(AggregateStateError);
      await expect(f.repository.remove(new Counter('n2', 'new'))).rejects.toBeInstanceOf(AggregateStateError);
      const counter = await stored(f, 'st');
      await expect(f.repository.insert(counter)).rejects.toBeInstanceOf(AggregateStateError);
      const deleted = (await f.repository.findById(counter.id))!;
      deleted.markDeleted();
      await expect(f.repository.update(deleted)).rejects.toBeInstanceOf(AggregateStateError);
      expect(await f.repository.currentVersion('n1')).toBe(-1);
      expect(await f.repository.currentVersion(counter.id)).toBe(1);
      expect(f.published).toEqual([]);
    });
  });
}
