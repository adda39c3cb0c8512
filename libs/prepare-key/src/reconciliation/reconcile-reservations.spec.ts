import { setImmediate } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { waitFor } from '../../../../test/support/wait.js';
import { MemoryPrepareKeyFactory } from '../backends/memory/memory-prepare-key.factory.js';
import { PrepareKeyArgumentError } from '../errors.js';
import type { PrepareKey } from '../prepare-key.js';
import { toTtlAt } from '../prepared-value.js';
import { reconcileReservations } from './reconcile-reservations.js';

type Owner = { owner: string };

async function seeded(count: number, factory = new MemoryPrepareKeyFactory()): Promise<PrepareKey<Owner>> {
  const pk = factory.create<Owner>('username');
  for (let i = 0; i < count; i++) await pk.prepare(`k${i}`, { owner: `o${i}` });
  return pk;
}

async function keysOf(pk: PrepareKey<Owner>): Promise<string[]> {
  const keys: string[] = [];
  for await (const record of pk.records()) keys.push(record.key);
  return keys.sort();
}

const deadOwners = new Set(['o1', 'o3', 'o5']);
const isLive = (_key: string, value: Owner) => !deadOwners.has(value.owner);

describe('reconcileReservations', () => {
  it('releases exactly the records whose owner isLive denies, and counts them', async () => {
    const pk = await seeded(8);
    const report = await reconcileReservations(pk, isLive, { pageSize: 3, concurrency: 4 });
    expect(report).toEqual({ scanned: 8, expired: 0, live: 5, released: 3, skipped: 0, failed: 0 });
    expect(await keysOf(pk)).toEqual(['k0', 'k2', 'k4', 'k6', 'k7']);
  });

  it('takes a sync or an async isLive, and hands it the key, the value and the PreparedValue', async () => {
    const pk = await seeded(3);
    const seen: Array<[string, Owner, number]> = [];
    const report = await reconcileReservations(pk, async (key, value, prepared) => {
      seen.push([key, value, prepared.ttlAt]);
      await setImmediate(); // answers on a later turn of the event loop
      return value.owner !== 'o1';
    });
    expect(report.released).toBe(1);
    expect(seen.map(([key]) => key).sort()).toEqual(['k0', 'k1', 'k2']);
    expect(seen.find(([key]) => key === 'k2')?.[1]).toEqual({ owner: 'o2' });
  });

  it('leaves alone a record re-prepared by a live owner between listing and release (skipped)', async () => {
    const pk = await seeded(4);
    const report = await reconcileReservations(pk, async (key, value) => {
      if (key === 'k1') expect(await pk.reprepare('k1', value, { owner: 'new-owner' })).toBe(true);
      return value.owner !== 'o1' && value.owner !== 'o3';
    });
    expect(report).toEqual({ scanned: 4, expired: 0, live: 2, released: 1, skipped: 1, failed: 0 });
    expect(await pk.get('k1')).toEqual({ owner: 'new-owner' });
    expect(await pk.get('k3')).toBeUndefined();
  });

  it('dryRun asks and counts but releases nothing', async () => {
    const pk = await seeded(6);
    const report = await reconcileReservations(pk, isLive, { dryRun: true });
    expect(report).toEqual({ scanned: 6, expired: 0, live: 3, released: 3, skipped: 0, failed: 0 });
    expect(await keysOf(pk)).toHaveLength(6);
  });

  it('leaves expired records alone unless includeExpired', async () => {
    let now = 1_000_000;
    const factory = new MemoryPrepareKeyFactory({ clock: () => now });
    const pk = factory.create<Owner>('n');
    await pk.prepare('live', { owner: 'o0' });
    await pk.prepare('expired-dead', toTtlAt({ owner: 'o1' }, now + 10));
    await pk.prepare('expired-live', toTtlAt({ owner: 'o2' }, now + 10));
    now += 100;
    const asked: string[] = [];
    const judge = (key: string, value: Owner) => (asked.push(key), value.owner !== 'o1');

    expect(await reconcileReservations(pk, judge, { now: () => now })).toEqual({
      scanned: 3,
      expired: 2,
      live: 1,
      released: 0,
      skipped: 0,
      failed: 0,
    });
    expect(asked).toEqual(['live']);

    expect(await reconcileReservations(pk, judge, { now: () => now, includeExpired: true })).toEqual({
      scanned: 3,
      expired: 0,
      live: 2,
      released: 1,
      skipped: 0,
      failed: 0,
    });
    expect(await keysOf(pk)).toEqual(['expired-live', 'live']);
  });

  it('counts a throwing isLive, a non-boolean answer and a failing rollback as failed, reports them, releases nothing for them', async () => {
    const pk = await seeded(4);
    const errors: Array<[string, string]> = [];
    const failure = new Error('owner lookup failed');
    const report = await reconcileReservations(
      pk,
      (key) => {
        if (key === 'k0') throw failure;
        if (key === 'k1') return undefined as unknown as boolean; // a forgotten return must not delete
        return key === 'k2';
      },
      { onError: (error, key) => errors.push([key, (error as Error).message]) },
    );
    expect(report).toEqual({ scanned: 4, expired: 0, live: 1, released: 1, skipped: 0, failed: 2 });
    expect(errors.sort()).toEqual([
      ['k0', 'owner lookup failed'],
      ['k1', "isLive('k1') returned undefined, not a boolean"],
    ]);
    expect(await keysOf(pk)).toEqual(['k0', 'k1', 'k2']);

    const rollbackFailure = new Error('backend down');
    const broken = Object.assign(Object.create(pk) as PrepareKey<Owner>, {
      rollback: async () => {
        throw rollbackFailure;
      },
    });
    const seen: unknown[] = [];
    expect(await reconcileReservations(broken, () => false, { onError: (error) => seen.push(error) })).toMatchObject({
      released: 0,
      failed: 3,
    });
    expect(seen).toEqual([rollbackFailure, rollbackFailure, rollbackFailure]);
  });

  it('runs at most `concurrency` checks at once', async () => {
    const pk = await seeded(50);
    let running = 0;
    let peak = 0;
    let fiveRunning!: () => void;
    const five = new Promise<void>((resolve) => (fiveRunning = resolve));
    // Every check holds its slot until five run at once (one at a time never gets there), and
    // one turn of the event loop longer: listing a memory store takes no I/O, so any further
    // check that could start has started by then.
    await waitFor(
      'five checks running at once',
      reconcileReservations(
        pk,
        async () => {
          peak = Math.max(peak, ++running);
          if (running === 5) fiveRunning();
          await five;
          await setImmediate();
          running--;
          return true;
        },
        { concurrency: 5, pageSize: 7 },
      ),
    );
    expect(peak).toBe(5);
  });

  it('rejects bad options before reading anything', async () => {
    const pk = await seeded(1);
    await expect(reconcileReservations(pk, isLive, { concurrency: 0 })).rejects.toBeInstanceOf(PrepareKeyArgumentError);
    await expect(reconcileReservations(pk, isLive, { pageSize: 0 })).rejects.toBeInstanceOf(PrepareKeyArgumentError);
    await expect(reconcileReservations(pk, undefined as unknown as typeof isLive)).rejects.toThrow(/isLive/);
    expect(await keysOf(pk)).toEqual(['k0']);
  });
});

describe('reconcileReservations with { areLive }, a page at a time', () => {
  const areLiveBy =
    (asked: string[][]) =>
    async (records: ReadonlyArray<{ key: string; value: { value: Owner } }>): Promise<boolean[]> => {
      asked.push(records.map((record) => record.key));
      await setImmediate();
      return records.map((record) => isLive(record.key, record.value.value));
    };

  it('asks once per page, and reports and releases what isLive would', async () => {
    const pk = await seeded(8);
    const asked: string[][] = [];
    const report = await reconcileReservations(pk, { areLive: areLiveBy(asked) }, { pageSize: 3 });
    expect(report).toEqual({ scanned: 8, expired: 0, live: 5, released: 3, skipped: 0, failed: 0 });
    expect(asked.map((page) => page.length)).toEqual([3, 3, 2]);
    expect(asked.flat().sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
    expect(await keysOf(pk)).toEqual(['k0', 'k2', 'k4', 'k6', 'k7']);

    const dry = await seeded(8);
    expect(await reconcileReservations(dry, { areLive: areLiveBy([]) }, { dryRun: true })).toMatchObject({
      released: 3,
    });
    expect(await keysOf(dry)).toHaveLength(8);
  });

  it('hands it no expired record unless includeExpired', async () => {
    let now = 1_000_000;
    const pk = new MemoryPrepareKeyFactory({ clock: () => now }).create<Owner>('n');
    await pk.prepare('live', { owner: 'o0' });
    await pk.prepare('expired-dead', toTtlAt({ owner: 'o1' }, now + 10));
    now += 100;
    const asked: string[][] = [];
    const areLive = areLiveBy(asked);
    expect(await reconcileReservations(pk, { areLive }, { now: () => now })).toMatchObject({ expired: 1, live: 1 });
    expect(asked).toEqual([['live']]);
    expect(await reconcileReservations(pk, { areLive }, { now: () => now, includeExpired: true })).toMatchObject({
      expired: 0,
      live: 1,
      released: 1,
    });
  });

  it('counts a page failed, releasing none of it, when areLive throws or does not answer each record', async () => {
    const pk = await seeded(6);
    const errors: string[] = [];
    const failure = new Error('owners unreadable');
    const report = await reconcileReservations(
      pk,
      {
        areLive: (records) => {
          if (records.some((record) => record.key === 'k1')) throw failure;
          if (records.some((record) => record.key === 'k3')) return [false]; // one answer short
          return records.map(() => false);
        },
      },
      { pageSize: 2, onError: (error, key) => errors.push(`${key}: ${(error as Error).message}`) },
    );
    expect(report).toEqual({ scanned: 6, expired: 0, live: 0, released: 2, skipped: 0, failed: 4 });
    expect(errors.sort()).toEqual([
      'k0: owners unreadable',
      'k1: owners unreadable',
      'k2: areLive gave 1 answers for 2 records',
      'k3: areLive gave 1 answers for 2 records',
    ]);
    expect(await keysOf(pk)).toEqual(['k0', 'k1', 'k2', 'k3']);
  });

  it("releases a page's dead records `concurrency` at once", async () => {
    const pk = await seeded(6);
    let running = 0;
    let peak = 0;
    const counted = Object.assign(Object.create(pk) as PrepareKey<Owner>, {
      rollback: async (key: string, value: Owner) => {
        peak = Math.max(peak, ++running);
        await setImmediate();
        running--;
        return pk.rollback(key, value);
      },
    });
    const report = await reconcileReservations(
      counted,
      { areLive: (records) => records.map(() => false) },
      { pageSize: 6, concurrency: 3 },
    );
    expect(report).toMatchObject({ released: 6, failed: 0 });
    expect(peak).toBe(3);
  });
});
