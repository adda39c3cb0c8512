import { describe, expect, it } from '@jest/globals';
import { InvalidAggregateIdError, MissingIdGeneratorError, OptimisticLockError } from '../../errors.js';
import { Counter } from '../counter.aggregate.js';
import type { AggregateIdGeneratorSource } from '../../repository/repository.interfaces.js';
import { BAD_IDS, UNSTORABLE_IDS, type RepositoryContractContext } from './contract-context.js';

/** Cases of describeRepositoryContract (see ../repository.contract.ts). */
export function describeIdCases(context: RepositoryContractContext): void {
  const { harness, fixture, stored, options } = context;
  describe('remove', () => {
    it('publishes PURGE, after which currentVersion is -1, findById null and existsById false', async () => {
      const f = fixture();
      const counter = await stored(f, 'gone', 'gone');
      counter.increment();
      await f.repository.update(counter);
      await f.repository.remove(counter);
      expect(f.published.map((e) => [e.type, e.version])).toEqual([
        ['UPSERT', 2],
        ['PURGE', 3],
      ]);
      expect(await f.repository.currentVersion('gone')).toBe(-1);
      expect(await f.repository.findById('gone')).toBeNull();
      expect(await f.repository.existsById('gone')).toBe(false);
    });

    it('a stale remove is an OptimisticLockError, deletes nothing, publishes nothing and unmarks the aggregate', async () => {
      const f = fixture();
      await stored(f, 'keep', 'keep');
      const stale = (await f.repository.findById('keep'))!;
      const fresh = (await f.repository.findById('keep'))!;
      fresh.increment();
      await f.repository.update(fresh);
      f.published.length = 0;
      await expect(f.repository.remove(stale)).rejects.toBeInstanceOf(OptimisticLockError);
      expect(stale.isDeleted()).toBe(false);
      expect(f.published).toEqual([]);
      expect(await f.repository.currentVersion('keep')).toBe(2);
      // Removing what is already gone is a conflict too: the PURGE was published by the remove that won.
      await f.repository.remove(fresh);
      await expect(f.repository.remove((await f.repository.findById('keep')) ?? stale)).rejects.toBeInstanceOf(
        OptimisticLockError,
      );
      expect(f.published.map((e) => e.type)).toEqual(['PURGE']);
    });
  });

  describe('ids', () => {
    it.each(BAD_IDS)('refuses %s on every operation, changes nothing and publishes nothing', async (_what, badId) => {
      const f = fixture();
      const a = await stored(f, 'a', 'id-a');
      const b = await stored(f, 'b', 'id-b');
      const before = await harness().raw?.(f.repository);

      const bad = <T>(p: Promise<T>) => expect(p).rejects.toBeInstanceOf(InvalidAggregateIdError);
      await bad(f.repository.findById(badId as string));
      await bad(f.repository.currentVersion(badId as string));
      await bad(f.repository.existsById(badId as string));

      const fresh = new Counter('tmp', 'bad-insert');
      fresh.id = badId as string;
      if (badId === null || badId === '') {
        // Empty ids mean "generate one", and there is no generator here.
        await expect(f.repository.insert(fresh)).rejects.toBeInstanceOf(MissingIdGeneratorError);
      } else {
        await bad(f.repository.insert(fresh));
      }

      const loaded = (await f.repository.findById('id-a'))!;
      loaded.increment(1000);
      loaded.id = badId as string;
      await bad(f.repository.update(loaded));
      await bad(f.repository.remove(loaded));
      expect(loaded.isDeleted()).toBe(false);

      expect(f.published).toEqual([]);
      for (const original of [a, b]) {
        const now = (await f.repository.findById(original.id))!;
        expect([now.oldVersion, now.count]).toEqual([1, 0]);
      }
      const target = harness();
      if (target.raw) expect(await target.raw(f.repository)).toEqual(before);
    });

    it.each(UNSTORABLE_IDS)(
      'answers "no such aggregate" for %s on reads, refuses it on writes, and changes nothing',
      async (_what, id) => {
        const f = fixture();
        await stored(f, 'a', 'id-a');
        const before = await harness().raw?.(f.repository);
        expect(await f.repository.findById(id)).toBeNull();
        expect(await f.repository.currentVersion(id)).toBe(-1);
        expect(await f.repository.existsById(id)).toBe(false);

        const fresh = new Counter(id, 'unstorable');
        await expect(f.repository.insert(fresh)).rejects.toBeInstanceOf(InvalidAggregateIdError);
        expect(fresh.isNew()).toBe(true);
        const loaded = (await f.repository.findById('id-a'))!;
        loaded.increment();
        loaded.id = id;
        await expect(f.repository.update(loaded)).rejects.toBeInstanceOf(InvalidAggregateIdError);
        await expect(f.repository.remove(loaded)).rejects.toBeInstanceOf(InvalidAggregateIdError);

        expect(f.published).toEqual([]);
        expect(await f.repository.currentVersion('id-a')).toBe(1);
        const target = harness();
        if (target.raw) expect(await target.raw(f.repository)).toEqual(before);
      },
    );

    it('accepts string ids as plain values; a numeric id is kept apart from the equal string, or refused — never confused with it', async () => {
      const f = fixture();
      const counter = new Counter('$ne', 'dollar');
      await f.repository.insert(counter);
      expect(await f.repository.currentVersion('$ne')).toBe(1);
      expect((await f.repository.findById('$ne'))!.label).toBe('dollar');
      const numeric = new Counter(42 as unknown as string, 'numeric');
      if (options.numericIds === 'refused') {
        await expect(f.repository.insert(numeric)).rejects.toBeInstanceOf(InvalidAggregateIdError);
        await expect(f.repository.currentVersion(42 as unknown as string)).rejects.toBeInstanceOf(
          InvalidAggregateIdError,
        );
        expect(numeric.isNew()).toBe(true);
        expect(await f.repository.currentVersion('42')).toBe(-1);
        return;
      }
      await f.repository.insert(numeric);
      expect(await f.repository.currentVersion(42 as unknown as string)).toBe(1);
      expect(await f.repository.currentVersion('42')).toBe(-1);
    });

    it('insert without an id fails with MissingIdGeneratorError when no generator is configured, storing nothing', async () => {
      const f = fixture();
      const counter = new Counter(undefined, 'anonymous');
      await expect(f.repository.insert(counter)).rejects.toBeInstanceOf(MissingIdGeneratorError);
      expect(counter.isNew()).toBe(true);
      expect(f.published).toEqual([]);
    });

    it("insert without an id takes one from the aggregate's generator", async () => {
      let n = 0;
      const asked: unknown[] = [];
      const idGenerators: AggregateIdGeneratorSource = {
        get(aggregate) {
          asked.push(aggregate);
          return { generate: () => `gen-${++n}` };
        },
      };
      const f = fixture({ idGenerators });
      const first = new Counter(undefined, 'one');
      const second = new Counter('', 'two');
      await f.repository.insert(first);
      await f.repository.insert(second);
      expect([first.id, second.id]).toEqual(['gen-1', 'gen-2']);
      expect(asked).toEqual([Counter, Counter]);
      expect((await f.repository.findById('gen-2'))!.label).toBe('two');
      expect(f.published.map((e) => e.id)).toEqual(['gen-1', 'gen-2']);
    });
  });
}
