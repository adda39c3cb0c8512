import { describe, expect, it } from '@jest/globals';
import { PreparedValue, TTL_FOREVER, toTtlAt } from '../../prepared-value.js';
import { SHORT_TTL_MS, type ContractContext } from './contract-context.js';

/** How long a record that is to be extended stays unexpired: see 'extends a reservation'. */
const EXTENSION_WINDOW_MS = 2_000;

/** Cases of describePrepareKeyContract (see prepare-key.contract.ts). */
export function describeReservationCases(context: ContractContext): void {
  const { fresh, now, expire, inAdvance, expired } = context;
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
      const ttlAt = now() + 60_000;
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
      expect(await pk.prepare('alice', toTtlAt({ owner: 'u1' }, now() + 60_000))).toBe(false);
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
    const expiredAlice = expired([['alice', { owner: 'u1' }]]);
    it('a TTL record holds the key until ttlAt, then get hides it and getValue still shows it', async () => {
      // Held: a ttlAt a minute ahead, which no slow step can reach. Expired: one set up in advance.
      const { pk, result: ttlAt } = expiredAlice();
      const heldUntil = now() + 60_000;
      expect(await pk.prepare('bob', toTtlAt({ owner: 'u1' }, heldUntil))).toBe(true);
      expect(await pk.get('bob')).toEqual({ owner: 'u1' });
      expect(await pk.prepare('bob', { owner: 'u2' })).toBe(false);

      expect(await pk.get('alice')).toBeUndefined();
      const seen = await pk.getValue('alice');
      expect(seen?.value).toEqual({ owner: 'u1' });
      expect(seen?.ttlAt).toBe(ttlAt);
      expect(seen?.isExpired(now())).toBe(true);
    });

    const expiredTwo = expired([
      ['alice', { owner: 'u1' }],
      ['bob', { owner: 'u3' }],
    ]);
    it('an expired key can be prepared again, by another value or the same one', async () => {
      const { pk } = expiredTwo();
      expect(await pk.prepare('alice', { owner: 'u2' })).toBe(true);
      expect(await pk.get('alice')).toEqual({ owner: 'u2' });
      expect((await pk.getValue('alice'))?.ttlAt).toBe(TTL_FOREVER);
      expect(await pk.prepare('alice', { owner: 'u1' })).toBe(false);

      expect(await pk.prepare('bob', { owner: 'u3' })).toBe(true);
      expect(await pk.getValue('bob')).toEqual(new PreparedValue({ owner: 'u3' }, TTL_FOREVER));
    });

    const expiredTwice = inAdvance(async (pk) => {
      const first = now() + SHORT_TTL_MS;
      expect(await pk.prepare('alice', toTtlAt({ owner: 'u1' }, first))).toBe(true);
      await expire(first);
      const second = now() + SHORT_TTL_MS;
      // Over a record that has expired: true, however long the wait ran.
      expect(await pk.prepare('alice', toTtlAt({ owner: 'u2' }, second))).toBe(true);
      await expire(second);
      return second;
    });
    it('a re-prepared TTL record expires again at its new ttlAt', async () => {
      const { pk, result: second } = expiredTwice();
      expect(await pk.get('alice')).toBeUndefined();
      expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u2' }, second));
      expect(await pk.prepare('alice', { owner: 'u3' })).toBe(true);
    });

    const extended = inAdvance(async (pk) => {
      // The reprepare must reach the store before the first ttlAt: two round trips, given a
      // window many times what they take on a loaded machine.
      const ttlAt = now() + EXTENSION_WINDOW_MS;
      const later = now() + 60_000;
      const answers = [
        await pk.prepare('alice', toTtlAt({ owner: 'u1' }, ttlAt)),
        await pk.reprepare('alice', toTtlAt({ owner: 'u1' }, later)),
      ];
      await expire(ttlAt);
      return { answers, later };
    });
    it('reprepare(key, value) extends a reservation before it expires', async () => {
      const {
        pk,
        result: { answers, later },
      } = extended();
      expect(answers).toEqual([true, true]);
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

    const expiredAlice = expired([['alice', { owner: 'u1' }]]);
    it('deletes an expired record too', async () => {
      const { pk } = expiredAlice();
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
      const ttlAt = now() + 60_000;
      await pk.prepare('alice', toTtlAt({ owner: 'u1' }, ttlAt));
      expect(await pk.rollback('alice', { owner: 'u2' })).toBe(false);
      expect(await pk.rollback('alice', { owner: 'u1', n: 1 })).toBe(false);
      expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, ttlAt));
    });

    it('resolves false for an absent key', async () => {
      expect(await fresh().rollback('nobody', { owner: 'u1' })).toBe(false);
    });

    const expiredTwo = expired([
      ['alice', { owner: 'u1' }],
      ['bob', { owner: 'u2' }],
    ]);
    it('deletes an expired record whose value matches', async () => {
      const { pk } = expiredTwo();
      expect(await pk.rollback('alice', { owner: 'u1' })).toBe(true);
      expect(await pk.getValue('alice')).toBeUndefined();
      expect(await pk.rollback('bob', { owner: 'other' })).toBe(false);
      expect((await pk.getValue('bob'))?.value).toEqual({ owner: 'u2' });
    });
  });
}
