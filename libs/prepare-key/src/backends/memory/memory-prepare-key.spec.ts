import { describe, expect, it } from '@jest/globals';
import { PrepareKeyArgumentError } from '../../errors.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PreparedValue, toTtlAt } from '../../prepared-value.js';
import { describePrepareKeyContract } from '../../testing/index.js';
import { MemoryPrepareKeyFactory } from './memory-prepare-key.factory.js';
import type { MemoryRecordStore } from './memory-record-store.js';

// Expiry by a clock the suite moves: no case waits for real time.
describePrepareKeyContract('memory', () => {
  const clock = manualClock(Date.now());
  return {
    factory: new MemoryPrepareKeyFactory({ clock: clock.read }),
    clock: { now: clock.read, advance: (ms) => void (clock.now += ms) },
  };
});

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  const clock = { now: start, read: () => clock.now };
  return clock;
}

function storeOf(pk: PrepareKey<unknown>): MemoryRecordStore {
  return (pk as unknown as { store: MemoryRecordStore }).store;
}

async function keysOf(pk: PrepareKey<unknown>, pageSize: number): Promise<string[]> {
  const keys: string[] = [];
  for await (const record of pk.records({ pageSize })) keys.push(record.key);
  return keys;
}

describe('MemoryPrepareKeyFactory', () => {
  it('decides expiry with the configured clock, in get and in prepare', async () => {
    const clock = manualClock();
    const pk = new MemoryPrepareKeyFactory({ clock: clock.read }).create('k');
    expect(await pk.prepare('a', toTtlAt('v1', clock.now + 10))).toBe(true);
    clock.now += 9;
    expect(await pk.get('a')).toBe('v1');
    expect(await pk.prepare('a', 'v2')).toBe(false);
    clock.now += 1; // ttlAt reached: expired
    expect(await pk.get('a')).toBeUndefined();
    expect(await pk.reprepare('a', 'v2')).toBe(false);
    expect(await pk.prepare('a', 'v2')).toBe(true);
  });

  it('keeps an expired record readable for retentionMs after ttlAt, then drops it', async () => {
    const clock = manualClock();
    const pk = new MemoryPrepareKeyFactory({ clock: clock.read, retentionMs: 1000 }).create('k');
    const ttlAt = clock.now + 10;
    await pk.prepare('a', toTtlAt('v1', ttlAt));
    clock.now = ttlAt + 999;
    expect(await pk.getValue('a')).toEqual(new PreparedValue('v1', ttlAt));
    expect(await keysOf(pk, 10)).toEqual(['a']);
    clock.now = ttlAt + 1000;
    expect(await pk.getValue('a')).toBeUndefined();
    expect(await pk.rollback('a')).toBe(false);
    expect(await pk.reprepare('a', 'v1', 'v2')).toBe(false);
    expect(await keysOf(pk, 10)).toEqual([]);
  });

  it('defaults to 24 hours of retention', async () => {
    const clock = manualClock();
    const pk = new MemoryPrepareKeyFactory({ clock: clock.read }).create('k');
    await pk.prepare('a', toTtlAt('v1', clock.now));
    clock.now += 24 * 3600_000 - 1;
    expect((await pk.getValue('a'))?.value).toBe('v1');
    clock.now += 1;
    expect(await pk.getValue('a')).toBeUndefined();
  });

  it('drops dead records as it writes, so churn of short reservations does not grow memory', async () => {
    const clock = manualClock();
    const pk = new MemoryPrepareKeyFactory({ clock: clock.read, retentionMs: 100 }).create('k');
    const store = storeOf(pk);
    // 50,000 one-shot reservations, each dead 200 ms after it was made; nobody reads them. The
    // largest size is checked once at the end (one expect per write was most of the test's time).
    let largest = 0;
    for (let i = 0; i < 50_000; i++) {
      await pk.prepare(`k${i}`, toTtlAt(i, clock.now + 100));
      clock.now += 1;
      largest = Math.max(largest, store.size);
    }
    expect(largest).toBeLessThan(1_000);
  });

  it('never drops a record that is live or still within retention', async () => {
    const clock = manualClock();
    const pk = new MemoryPrepareKeyFactory({ clock: clock.read, retentionMs: 1_000_000 }).create('k');
    await pk.prepare('forever', 'f');
    await pk.prepare('expired', toTtlAt('e', clock.now + 1));
    clock.now += 10;
    for (let i = 0; i < 1000; i++) await pk.prepare(`k${i}`, toTtlAt(i, clock.now + 1));
    expect(await pk.get('forever')).toBe('f');
    expect((await pk.getValue('expired'))?.value).toBe('e');
  });

  it('keeps expired records forever with retentionMs: Infinity', async () => {
    const clock = manualClock();
    const pk = new MemoryPrepareKeyFactory({ clock: clock.read, retentionMs: Infinity }).create('k');
    await pk.prepare('a', toTtlAt('v', clock.now));
    clock.now += 10 * 365 * 24 * 3600_000;
    expect((await pk.getValue('a'))?.value).toBe('v');
  });

  it('rejects invalid options at construction', () => {
    for (const retentionMs of [-1, Number.NaN, '1' as unknown as number]) {
      expect(() => new MemoryPrepareKeyFactory({ retentionMs })).toThrow(PrepareKeyArgumentError);
    }
    expect(() => new MemoryPrepareKeyFactory({ clock: 5 as unknown as () => number })).toThrow(/clock/);
  });

  it('rejects an invalid name', () => {
    const factory = new MemoryPrepareKeyFactory();
    expect(() => factory.create('')).toThrow(PrepareKeyArgumentError);
    expect(() => factory.create(42 as unknown as string)).toThrow(PrepareKeyArgumentError);
  });

  it('keeps the records of separate factories apart', async () => {
    const a = new MemoryPrepareKeyFactory().create('k');
    const b = new MemoryPrepareKeyFactory().create('k');
    expect(await a.prepare('x', 1)).toBe(true);
    expect(await b.prepare('x', 2)).toBe(true);
  });

  describe('listing while records change', () => {
    it('returns every record present throughout exactly once, despite deletes and inserts between pages', async () => {
      const pk = new MemoryPrepareKeyFactory().create<number>('k');
      for (let i = 0; i < 100; i++) await pk.prepare(`k${i}`, i);
      const seen: string[] = [];
      let page = 0;
      for await (const record of pk.records({ pageSize: 10 })) {
        seen.push(record.key);
        if (seen.length % 10 === 0) {
          page++;
          // Delete one record already seen and one not yet seen, insert a new one.
          await pk.rollback(`k${page * 10 - 5}`);
          await pk.rollback(`k${99 - page}`);
          await pk.prepare(`new${page}`, 1000 + page);
        }
      }
      expect(new Set(seen).size).toBe(seen.length);
      const deletedUnseen = new Set(Array.from({ length: 10 }, (_, p) => `k${99 - (p + 1)}`));
      for (let i = 0; i < 100; i++) {
        const key = `k${i}`;
        if (!deletedUnseen.has(key)) expect(seen).toContain(key);
      }
    });

    it('continues correctly when many listings run at once and their cursors are evicted', async () => {
      const pk = new MemoryPrepareKeyFactory().create<number>('k');
      for (let i = 0; i < 50; i++) await pk.prepare(`k${i}`, i);
      const listings = Array.from({ length: 40 }, () => pk.records({ pageSize: 3 })[Symbol.asyncIterator]());
      const seen = listings.map(() => [] as string[]);
      // Interleave 40 listings page by page: more open cursors than the store keeps.
      for (let round = 0; round < 60; round++) {
        for (const [i, listing] of listings.entries()) {
          const step = await listing.next();
          if (!step.done) seen[i].push(step.value.key);
        }
      }
      const all = Array.from({ length: 50 }, (_, i) => `k${i}`);
      for (const keys of seen) expect(keys).toEqual(all);
    });
  });
});
