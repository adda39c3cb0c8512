import { describe, expect, it } from '@jest/globals';
import { OptimisticLockError, RepositoryConfigurationError } from '../../errors.js';
import { UniqueKey } from '../../unique-keys/unique-key.decorator.js';
import type { UniqueKeyOwner, UniqueKeyReservations } from '../../unique-keys/unique-key.interfaces.js';
import { Counter } from '../counter.aggregate.js';
import type { RepositoryContractContext } from './contract-context.js';

/** A Counter whose label is a unique key, kept in `contract-label` reservations. */
@UniqueKey('contract-label', (counter: Counter) => counter.label)
class LabelledCounter extends Counter {}

interface Reservation {
  value: UniqueKeyOwner;
  ttlAt: number;
  isExpired(): boolean;
}

/**
 * Reservations in a Map, with every call that changed one recorded: the contract needs no
 * PrepareKey backend (an optional peer) to see that a refused write reserved and released nothing.
 */
function recordingReservations(): UniqueKeyReservations & { held: Map<string, Reservation>; changes: string[] } {
  const held = new Map<string, Reservation>();
  const changes: string[] = [];
  const same = (a: UniqueKeyOwner | undefined, b: UniqueKeyOwner) =>
    a !== undefined && a.aggregate === b.aggregate && a.id === b.id && a.at === b.at;
  const hold = (key: string, value: UniqueKeyOwner) =>
    held.set(key, { value, ttlAt: Number.MAX_SAFE_INTEGER, isExpired: () => false });
  return {
    name: 'contract-label',
    held,
    changes,
    prepare: async (key, value) => {
      if (held.has(key)) return false;
      changes.push(`prepare ${key}`);
      hold(key, value);
      return true;
    },
    getValue: async (key) => held.get(key),
    reprepare: async (key, oldValue, newValue) => {
      if (!same(held.get(key)?.value, oldValue)) return false;
      changes.push(`reprepare ${key}`);
      hold(key, newValue);
      return true;
    },
    rollback: async (key, value) => {
      if (!same(held.get(key)?.value, value)) return false;
      changes.push(`rollback ${key}`);
      return held.delete(key);
    },
    records: async function* () {
      for (const [key, value] of [...held]) yield { key, value };
    },
  };
}

/** Cases of describeRepositoryContract (see ../repository.contract.ts). */
export function describeExpectedVersionCases(context: RepositoryContractContext): void {
  const { fixture, stored } = context;
  // `update(aggregate, { expectedVersion })`: what an API honouring If-Match calls, once.
  describe('writes that state the version they expect (If-Match)', () => {
    it('update with a stale expectedVersion is an OptimisticLockError and writes nothing; the current one writes', async () => {
      const f = fixture();
      const counter = await stored(f, 'ev');
      counter.increment();
      await f.repository.update(counter); // v2, what a client read at v1 no longer matches
      f.published.length = 0;
      const loaded = (await f.repository.findById(counter.id))!;
      loaded.increment(10);

      const error = await f.repository.update(loaded, { expectedVersion: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OptimisticLockError);
      expect(error).toMatchObject({ aggregate: 'Counter', id: counter.id, expectedVersion: 1 });
      expect([loaded.oldVersion, loaded.newVersion]).toEqual([2, 3]);
      expect(f.published).toEqual([]);
      const still = (await f.repository.findById(counter.id))!;
      expect([still.oldVersion, still.count]).toEqual([2, 1]);

      await f.repository.update(loaded, { expectedVersion: 2 });
      expect([loaded.oldVersion, loaded.newVersion]).toEqual([3, 4]);
      expect(f.published.map((e) => [e.type, e.version])).toEqual([['UPSERT', 3]]);
      expect((await f.repository.findById(counter.id))!.count).toBe(11);
      // save passes it on.
      loaded.increment();
      await expect(f.repository.save(loaded, { expectedVersion: 2 })).rejects.toBeInstanceOf(OptimisticLockError);
      await f.repository.save(loaded, { expectedVersion: 3 });
      expect(await f.repository.currentVersion(counter.id)).toBe(4);
    });

    it('an expectedVersion ahead of the loaded aggregate loses nothing a later write stored', async () => {
      const f = fixture();
      await stored(f, 'ahead', 'ahead');
      const loaded = (await f.repository.findById('ahead'))!; // v1
      const other = (await f.repository.findById('ahead'))!;
      other.increment(5);
      await f.repository.update(other); // v2: what the client read
      f.published.length = 0;
      loaded.increment(1);
      // The client expects v2, which the store holds, but this aggregate was derived from v1.
      await expect(f.repository.update(loaded, { expectedVersion: 2 })).rejects.toBeInstanceOf(OptimisticLockError);
      const still = (await f.repository.findById('ahead'))!;
      expect([still.oldVersion, still.count]).toEqual([2, 5]);
      expect(f.published).toEqual([]);
    });

    it('remove with a stale expectedVersion is an OptimisticLockError and deletes nothing; the current one deletes', async () => {
      const f = fixture();
      const counter = await stored(f, 'evr');
      counter.increment();
      await f.repository.update(counter); // v2
      f.published.length = 0;
      const loaded = (await f.repository.findById(counter.id))!;

      await expect(f.repository.remove(loaded, { expectedVersion: 1 })).rejects.toBeInstanceOf(OptimisticLockError);
      expect(loaded.isDeleted()).toBe(false);
      expect(await f.repository.currentVersion(counter.id)).toBe(2);
      expect(f.published).toEqual([]);

      await f.repository.remove(loaded, { expectedVersion: 2 });
      expect(await f.repository.currentVersion(counter.id)).toBe(-1);
      expect(f.published.map((e) => [e.type, e.version])).toEqual([['PURGE', 3]]);
    });

    it('a stale expectedVersion reserves and releases no unique key; the current one moves the key', async () => {
      const reservations = recordingReservations();
      const f = fixture({ aggregate: LabelledCounter, uniqueKeys: { 'contract-label': reservations } });
      const counter = new LabelledCounter('evk', 'old-label');
      await f.repository.insert(counter);
      counter.increment();
      await f.repository.update(counter); // v2
      const owner = reservations.held.get('old-label')?.value;
      expect(owner).toMatchObject({ id: 'evk' });
      reservations.changes.length = 0;
      f.published.length = 0;

      const loaded = (await f.repository.findById('evk'))!;
      loaded.label = 'new-label';
      await expect(f.repository.update(loaded, { expectedVersion: 1 })).rejects.toBeInstanceOf(OptimisticLockError);
      expect(reservations.changes).toEqual([]);
      expect([...reservations.held.keys()]).toEqual(['old-label']);
      expect(f.published).toEqual([]);
      expect((await f.repository.findById('evk'))!.label).toBe('old-label');

      await f.repository.update(loaded, { expectedVersion: 2 });
      expect([...reservations.held.keys()]).toEqual(['new-label']);
      expect((await f.repository.findById('evk'))!.label).toBe('new-label');
    });

    it.each([[Number.NaN], [-1], [1.5], ['1' as unknown as number]])(
      'refuses expectedVersion %p before anything is written',
      async (expectedVersion) => {
        const f = fixture();
        const counter = await stored(f, `bad-${String(expectedVersion)}`);
        counter.increment();
        await expect(f.repository.update(counter, { expectedVersion })).rejects.toBeInstanceOf(
          RepositoryConfigurationError,
        );
        await expect(f.repository.remove(counter, { expectedVersion })).rejects.toBeInstanceOf(
          RepositoryConfigurationError,
        );
        expect(await f.repository.currentVersion(counter.id)).toBe(1);
        expect(f.published).toEqual([]);
      },
    );
  });
}
