import { describe, expect, it } from '@jest/globals';
import { PrepareKeyArgumentError, PrepareKeyStateError } from '../../errors.js';
import { PreparedValue, TTL_FOREVER, toTtlAt } from '../../prepared-value.js';
import type { ContractContext } from './contract-context.js';

/** Cases of describePrepareKeyContract (see prepare-key.contract.ts). */
export function describeReprepareCases(context: ContractContext): void {
  const { fresh, now, expired, snapshot } = context;
  describe('reprepare(key, value)', () => {
    it('replaces value and ttlAt of an unexpired record', async () => {
      const pk = fresh();
      await pk.prepare('alice', toTtlAt({ owner: 'u1' }, now() + 60_000));
      expect(await pk.reprepare('alice', { owner: 'u2' })).toBe(true);
      expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u2' }, TTL_FOREVER));
      const ttlAt = now() + 120_000;
      expect(await pk.reprepare('alice', toTtlAt({ owner: 'u3' }, ttlAt))).toBe(true);
      expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u3' }, ttlAt));
    });

    it('resolves false for an absent key and creates nothing', async () => {
      const pk = fresh();
      expect(await pk.reprepare('nobody', { owner: 'u1' })).toBe(false);
      expect(await pk.getValue('nobody')).toBeUndefined();
    });

    const expiredAlice = expired([['alice', { owner: 'u1' }]]);
    it('resolves false for an expired record and leaves it as it was', async () => {
      const { pk, result: ttlAt } = expiredAlice();
      expect(await pk.reprepare('alice', { owner: 'u2' })).toBe(false);
      expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, ttlAt));
    });
  });

  describe('reprepare(key, oldValue, newValue)', () => {
    it('replaces the value when the current one equals oldValue', async () => {
      const pk = fresh();
      await pk.prepare('alice', { owner: 'u1' });
      const ttlAt = now() + 60_000;
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

    const expiredAlice = expired([['alice', { owner: 'u1' }]]);
    it('replaces an expired record whose value equals oldValue (the condition is the value)', async () => {
      const { pk } = expiredAlice();
      expect(await pk.reprepare('alice', { owner: 'u1' }, { owner: 'u2' })).toBe(true);
      expect(await pk.get('alice')).toEqual({ owner: 'u2' });
    });
  });

  describe('reprepare(oldKey, oldValue, newKey, newValue): key change', () => {
    it('moves the reservation: newKey held by newValue, oldKey released', async () => {
      const pk = fresh();
      await pk.prepare('alice', { owner: 'u1' });
      const ttlAt = now() + 60_000;
      expect(await pk.reprepare('alice', { owner: 'u1' }, 'alicia', toTtlAt({ owner: 'u1', n: 2 }, ttlAt))).toBe(true);
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

    const expiredBob = expired([['bob', { owner: 'u2' }]]);
    it('takes a newKey whose record has expired', async () => {
      const { pk } = expiredBob();
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

    const expiredAlice9 = expired([['alice', { owner: 'u9' }]]);
    it('keeps newKey when oldKey holds another value whose record has expired (nobody holds oldKey)', async () => {
      const { pk } = expiredAlice9();
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
}
