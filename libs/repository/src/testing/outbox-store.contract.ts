// The cases every OutboxStore passes (memory, PostgreSQL, MongoDB, and yours). Events get into
// the store the way they do in production, through a repository's writes; time is the caller's
// `now`, so leases and retries are checked without waiting.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { OptimisticLockError } from '../errors.js';
import type { OutboxClaim, OutboxStore } from '../outbox/outbox.interfaces.js';
import type { IRepository } from '../repository/repository.interfaces.js';
import { Counter } from './counter.aggregate.js';

/** What a store hands the contract: the store, and a Counter repository that writes its events into it. */
export interface OutboxStoreContractTarget {
  /** The store under test, empty. */
  store: OutboxStore;
  /** A Counter repository whose writes store their data-sync events in `store`. */
  repository: IRepository<string, Counter>;
  close(): Promise<void>;
}

const LEASE = 30_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Defines the cases for one store. `setup` runs before every case (and `close` after it): each
 * case starts on an empty store.
 *
 * ```ts
 * describeOutboxStoreContract('my store', async () => {
 *   const store = new MyOutboxStore();
 *   return { store, repository: new MyCounterRepository({ aggregate: Counter, outbox: store }), close: async () => {} };
 * });
 * ```
 */
export function describeOutboxStoreContract(
  name: string,
  setup: () => OutboxStoreContractTarget | Promise<OutboxStoreContractTarget>,
): void {
  describe(`outbox store contract: ${name}`, () => {
    let harness: OutboxStoreContractTarget;
    let store: OutboxStore;
    let repository: IRepository<string, Counter>;
    beforeEach(async () => {
      harness = await setup();
      store = harness.store;
      repository = harness.repository;
    });
    afterEach(async () => {
      await harness?.close();
    });

    /** Inserts `id` and updates it until it is at `version`; returns the aggregate. */
    async function writeVersions(id: string, version: number): Promise<Counter> {
      const counter = new Counter(id, `label ${id}`);
      await repository.insert(counter);
      for (let v = 2; v <= version; v++) {
        counter.increment();
        await repository.update(counter);
      }
      return counter;
    }

    const claim = (owner: string, now: number, limit = 100, leaseMs = LEASE): Promise<OutboxClaim[]> =>
      store.claim({ owner, now, limit, leaseMs });
    const ids = (claims: OutboxClaim[]) => claims.map((c) => c.aggregateId).sort();

    it("stores every event of a write with it, and a claim hands over an instance's pending events in version order", async () => {
      const before = Date.now();
      await writeVersions('a', 3);
      const after = Date.now();
      const claims = await claim('relay-1', after);
      expect(claims).toHaveLength(1);
      const [c] = claims;
      expect(c).toMatchObject({ aggregate: 'Counter', aggregateId: 'a', owner: 'relay-1', leaseUntil: after + LEASE });
      expect(c.events.map((e) => e.version)).toEqual([1, 2, 3]);
      expect(c.events.map((e) => e.event.type)).toEqual(['UPSERT', 'UPSERT', 'UPSERT']);
      for (const record of c.events) {
        expect(record.eventId).toMatch(UUID);
        expect(record.event.eventId).toBe(record.eventId);
        expect(record).toMatchObject({
          aggregate: 'Counter',
          aggregateId: 'a',
          attempts: 0,
          lastError: null,
          deadAt: null,
        });
        expect(record.event).toMatchObject({ aggregate: 'Counter', id: 'a', version: record.version });
        expect(record.storedAt).toBeGreaterThanOrEqual(before);
        expect(record.storedAt).toBeLessThanOrEqual(after);
        expect(record.nextAttemptAt).toBeLessThanOrEqual(after);
      }
      expect(c.events[2].event).toMatchObject({ snapshot: { id: 'a', label: 'label a', count: 2, tags: [] } });
      expect(new Set(c.events.map((e) => e.eventId)).size).toBe(3);
    });

    it('a remove stores its PURGE; a write that failed stores nothing', async () => {
      const counter = await writeVersions('p', 1);
      const stale = (await repository.findById('p'))!;
      counter.increment();
      await repository.update(counter); // v2
      stale.increment();
      await expect(repository.update(stale)).rejects.toBeInstanceOf(OptimisticLockError);
      await expect(repository.insert(new Counter('p', 'again'))).rejects.toThrow();
      await repository.remove(counter); // v3 PURGE
      const [c] = await claim('r', Date.now());
      expect(c.events.map((e) => [e.version, e.event.type])).toEqual([
        [1, 'UPSERT'],
        [2, 'UPSERT'],
        [3, 'PURGE'],
      ]);
      expect((await store.status(Date.now())).pending).toBe(3);
    });

    it('a write stating a stale expectedVersion stores no event; the current one stores its own', async () => {
      const counter = await writeVersions('ev', 2);
      const loaded = (await repository.findById('ev'))!;
      loaded.increment();
      await expect(repository.update(loaded, { expectedVersion: 1 })).rejects.toBeInstanceOf(OptimisticLockError);
      await expect(repository.remove(loaded, { expectedVersion: 1 })).rejects.toBeInstanceOf(OptimisticLockError);
      expect((await store.status(Date.now())).pending).toBe(2);
      await repository.update(loaded, { expectedVersion: 2 }); // v3
      await repository.remove(loaded, { expectedVersion: 3 }); // v4 PURGE
      const [c] = await claim('r', Date.now());
      expect(c.events.map((e) => [e.version, e.event.type])).toEqual([
        [1, 'UPSERT'],
        [2, 'UPSERT'],
        [3, 'UPSERT'],
        [4, 'PURGE'],
      ]);
      expect(counter.oldVersion).toBe(2);
    });

    it('a live lease keeps an instance from every other claim (the same owner included) until it expires', async () => {
      await writeVersions('a', 2);
      const now = Date.now();
      expect(await claim('relay-1', now)).toHaveLength(1);
      expect(await claim('relay-2', now)).toEqual([]);
      expect(await claim('relay-1', now + 1)).toEqual([]);
      expect(await claim('relay-2', now + LEASE - 1)).toEqual([]);
      // Expired: a crashed relay's claim is taken over.
      const taken = await claim('relay-2', now + LEASE);
      expect(taken).toHaveLength(1);
      expect(taken[0]).toMatchObject({ owner: 'relay-2', leaseUntil: now + 2 * LEASE });
      expect(taken[0].events.map((e) => e.version)).toEqual([1, 2]);
      // The former owner can no longer ack what it lost.
      expect(
        await store.ack(
          'relay-1',
          taken[0].events.map((e) => e.eventId),
        ),
      ).toBe(0);
      expect(
        await store.ack(
          'relay-2',
          taken[0].events.map((e) => e.eventId),
        ),
      ).toBe(2);
    });

    it('renew extends a live claim (no other claim gets the instance until the new end), and only for its owner', async () => {
      await writeVersions('a', 2);
      const now = Date.now();
      const [c] = await claim('relay-1', now);
      const eventIds = c.events.map((e) => e.eventId);
      expect(await store.renew('relay-2', eventIds, now + 3 * LEASE)).toBe(0);
      expect(await store.renew('relay-1', [...eventIds, 'no-such-event'], now + 3 * LEASE)).toBe(2);
      // Past the first lease, before the renewed one: still relay-1's.
      expect(await claim('relay-2', now + 2 * LEASE)).toEqual([]);
      const taken = await claim('relay-2', now + 3 * LEASE);
      expect(taken.map((t) => t.events.map((e) => e.version))).toEqual([[1, 2]]);
      // Taken over: relay-1 can no longer renew (nor ack) it.
      expect(await store.renew('relay-1', eventIds, now + 10 * LEASE)).toBe(0);
      expect(await store.ack('relay-2', eventIds)).toBe(2);
    });

    it('renew leaves alone what is no longer leased: acked, released or failed events', async () => {
      await writeVersions('a', 3);
      const now = Date.now();
      const [c] = await claim('r', now);
      const [v1, v2, v3] = c.events.map((e) => e.eventId);
      expect(await store.ack('r', [v1])).toBe(1);
      expect(await store.renew('r', [v1, v2, v3], now + 2 * LEASE)).toBe(2);
      expect(await store.release('r', [v3])).toBe(1);
      expect(await store.renew('r', [v2, v3], now + 2 * LEASE)).toBe(1);
      expect(await store.fail('r', v2, { error: 'x', retryAt: now, maxAttempts: 5, now })).toMatchObject({
        attempts: 1,
      });
      expect(await store.renew('r', [v2, v3], now + 2 * LEASE)).toBe(0);
      // Nothing renewed, nothing leased: claimable at once.
      expect((await claim('other', now)).map((t) => t.events.map((e) => e.version))).toEqual([[2, 3]]);
    });

    it('an event written after its instance was claimed waits behind the claimed ones', async () => {
      const counter = await writeVersions('a', 1);
      const now = Date.now() + 10;
      const [first] = await claim('relay-1', now);
      counter.increment();
      await repository.update(counter); // v2 arrives while relay-1 holds v1
      const later = Date.now() + 10; // v2 is due by then
      expect(await claim('relay-2', later)).toEqual([]);
      expect(await store.ack('relay-1', [first.events[0].eventId])).toBe(1);
      // v1 delivered and gone: the instance's head is v2, free to claim.
      const [next] = await claim('relay-2', later);
      expect(next.events.map((e) => e.version)).toEqual([2]);
    });

    it('concurrent claims never hand one instance to two owners, and together they take every instance', async () => {
      const names = Array.from({ length: 24 }, (_, i) => `i${String(i).padStart(2, '0')}`);
      for (const id of names) await writeVersions(id, 2);
      const now = Date.now();
      const results = await Promise.all(Array.from({ length: 8 }, (_, r) => claim(`relay-${r}`, now, 4)));
      const seen = results.flatMap(ids);
      expect(new Set(seen).size).toBe(seen.length);
      for (const claims of results) expect(claims.length).toBeLessThanOrEqual(4);
      const rest = await claim('late', now, 100);
      expect([...seen, ...ids(rest)].sort()).toEqual(names);
      for (const c of [...results.flat(), ...rest]) expect(c.events.map((e) => e.version)).toEqual([1, 2]);
    });

    it('limit caps the instances of one claim', async () => {
      for (const id of ['a', 'b', 'c']) await writeVersions(id, 1);
      const now = Date.now();
      expect(await claim('r', now, 2)).toHaveLength(2);
      expect(await claim('r', now, 2)).toHaveLength(1);
    });

    it('ack removes only events leased to the owner', async () => {
      await writeVersions('a', 2);
      await writeVersions('b', 1);
      const now = Date.now();
      const claims = await claim('relay-1', now);
      const a = claims.find((c) => c.aggregateId === 'a')!;
      expect(await store.ack('relay-2', [a.events[0].eventId])).toBe(0);
      expect(await store.ack('relay-1', [a.events[0].eventId, 'no-such-event'])).toBe(1);
      expect((await store.status(now)).pending).toBe(2);
      expect(await store.ack('relay-1', [a.events[0].eventId])).toBe(0);
    });

    it('fail: attempts grow, the instance waits until retryAt (later events too), then anyone may claim it again', async () => {
      const counter = await writeVersions('a', 1);
      counter.increment();
      await repository.update(counter);
      const now = Date.now();
      const [c] = await claim('relay-1', now);
      const head = c.events[0];
      expect(
        await store.fail('relay-2', head.eventId, { error: 'not mine', retryAt: now + 5, maxAttempts: 3, now }),
      ).toBeNull();
      const outcome = await store.fail('relay-1', head.eventId, {
        error: 'handler down',
        retryAt: now + 1000,
        maxAttempts: 3,
        now,
      });
      expect(outcome).toEqual({ attempts: 1, dead: false, nextAttemptAt: now + 1000 });
      // The lease of the whole instance is gone, but the head is not due: nothing, v2 waits too.
      expect(await claim('relay-2', now + 999)).toEqual([]);
      const [again] = await claim('relay-2', now + 1000);
      expect(again.events.map((e) => e.version)).toEqual([1, 2]);
      expect(again.events[0]).toMatchObject({
        eventId: head.eventId,
        attempts: 1,
        lastError: 'handler down',
        nextAttemptAt: now + 1000,
        deadAt: null,
      });
      expect(again.events[1]).toMatchObject({ attempts: 0 });
    });

    it("fail: after maxAttempts the event is a dead letter, never claimed, and the instance's later events go on", async () => {
      const counter = await writeVersions('a', 1);
      counter.increment();
      await repository.update(counter);
      let now = Date.now();
      let deadId = '';
      for (let attempt = 1; attempt <= 2; attempt++) {
        const [c] = await claim('relay', now);
        deadId = c.events[0].eventId;
        expect(c.events[0].version).toBe(1);
        const outcome = await store.fail('relay', deadId, {
          error: `boom ${attempt}`,
          retryAt: now + 10,
          maxAttempts: 2,
          now,
        });
        expect(outcome).toEqual(
          attempt === 2
            ? { attempts: 2, dead: true, nextAttemptAt: null }
            : { attempts: 1, dead: false, nextAttemptAt: now + 10 },
        );
        now += 10;
      }
      expect(await store.status(now)).toMatchObject({ pending: 1, deadLetters: 1 });
      const [rest] = await claim('relay', now);
      expect(rest.events.map((e) => e.version)).toEqual([2]);
      expect(await store.fail('relay', deadId, { error: 'again', retryAt: now, maxAttempts: 2, now })).toBeNull();
      const [letter] = await store.listDeadLetters();
      expect(letter).toMatchObject({
        eventId: deadId,
        version: 1,
        attempts: 2,
        lastError: 'boom 2',
        deadAt: now - 10,
        aggregate: 'Counter',
        aggregateId: 'a',
      });
    });

    it("release gives an owner's claims back at once, attempts unchanged; with ids, only those", async () => {
      await writeVersions('a', 1);
      await writeVersions('b', 1);
      const now = Date.now();
      const claims = await claim('relay-1', now);
      expect(claims).toHaveLength(2);
      const a = claims.find((c) => c.aggregateId === 'a')!;
      expect(await store.release('relay-2')).toBe(0);
      expect(await store.release('relay-1', [a.events[0].eventId])).toBe(1);
      expect(ids(await claim('relay-2', now))).toEqual(['a']);
      expect(await store.release('relay-1')).toBe(1);
      const [b] = await claim('relay-3', now);
      expect(b).toMatchObject({ aggregateId: 'b' });
      expect(b.events[0]).toMatchObject({ attempts: 0 });
    });

    it('status counts pending events (leased or not) and dead letters, and ages the oldest pending one', async () => {
      expect(await store.status(Date.now())).toEqual({ pending: 0, oldestPendingAgeMs: null, deadLetters: 0 });
      await writeVersions('a', 2);
      await writeVersions('b', 1);
      const now = Date.now();
      const [first] = await claim('r', now, 1);
      const all = [...first.events];
      const status = await store.status(now + 500);
      expect(status.pending).toBe(3);
      expect(status.deadLetters).toBe(0);
      const oldest = Math.min(...all.map((e) => e.storedAt));
      // 'a' was written first: its v1 is the oldest pending event.
      expect(status.oldestPendingAgeMs).toBe(now + 500 - oldest);
    });

    it('dead letters are listed oldest first, by aggregate, in pages, and replayed to pending', async () => {
      for (const id of ['a', 'b', 'c']) await writeVersions(id, 1);
      const now = Date.now();
      const claims = await claim('r', now);
      const byId = new Map(claims.map((c) => [c.aggregateId, c.events[0].eventId]));
      // Dead in the order c, a, b.
      for (const [i, id] of ['c', 'a', 'b'].entries()) {
        expect(
          await store.fail('r', byId.get(id)!, { error: `e${id}`, retryAt: now, maxAttempts: 1, now: now + i }),
        ).toMatchObject({ dead: true });
      }
      const listed = await store.listDeadLetters();
      expect(listed.map((l) => l.aggregateId)).toEqual(['c', 'a', 'b']);
      expect(listed.map((l) => l.deadAt)).toEqual([now, now + 1, now + 2]);
      const page1 = await store.listDeadLetters({ limit: 2 });
      const page2 = await store.listDeadLetters({ limit: 2, after: page1[1].eventId });
      expect([...page1, ...page2].map((l) => l.aggregateId)).toEqual(['c', 'a', 'b']);
      expect(await store.listDeadLetters({ aggregate: 'Other' })).toEqual([]);
      expect((await store.listDeadLetters({ aggregate: 'Counter' })).length).toBe(3);
      expect(await claim('r', now + 10_000_000)).toEqual([]);

      expect(await store.replayDeadLetters([byId.get('a')!, 'no-such-event'], now + 100)).toBe(1);
      expect(await store.replayDeadLetters([byId.get('a')!], now + 100)).toBe(0);
      expect(await store.status(now + 100)).toMatchObject({ pending: 1, deadLetters: 2 });
      expect(await claim('r', now + 99)).toEqual([]);
      const [replayed] = await claim('r', now + 100);
      expect(replayed.aggregateId).toBe('a');
      expect(replayed.events[0]).toMatchObject({
        eventId: byId.get('a'),
        attempts: 0,
        lastError: null,
        deadAt: null,
        nextAttemptAt: now + 100,
      });
      expect(await store.ack('r', [byId.get('a')!])).toBe(1);
      expect(await store.status(now + 100)).toEqual({ pending: 0, oldestPendingAgeMs: null, deadLetters: 2 });
    });

    it('bad input is refused before anything changes', async () => {
      await writeVersions('a', 1);
      const now = Date.now();
      for (const bad of [
        { owner: '', limit: 1, leaseMs: 1, now },
        { owner: 'r', limit: 0, leaseMs: 1, now },
        { owner: 'r', limit: 1.5, leaseMs: 1, now },
        { owner: 'r', limit: 1, leaseMs: 0, now },
        { owner: 'r', limit: 1, leaseMs: 1, now: Number.NaN },
        { owner: { $ne: null } as unknown as string, limit: 1, leaseMs: 1, now },
      ]) {
        await expect(store.claim(bad)).rejects.toThrow();
      }
      const [c] = await claim('r', now);
      const id = c.events[0].eventId;
      await expect(store.fail('r', id, { error: 'x', retryAt: now, maxAttempts: 0, now })).rejects.toThrow();
      await expect(store.fail('r', id, { error: 'x', retryAt: Number.NaN, maxAttempts: 1, now })).rejects.toThrow();
      await expect(store.ack('', [id])).rejects.toThrow();
      await expect(store.ack('r', [{ $ne: null } as unknown as string])).rejects.toThrow();
      await expect(store.listDeadLetters({ limit: 0 })).rejects.toThrow();
      await expect(store.replayDeadLetters([id], Number.NaN)).rejects.toThrow();
      await expect(store.renew('', [id], now + LEASE)).rejects.toThrow();
      await expect(store.renew('r', [id], Number.NaN)).rejects.toThrow();
      await expect(store.renew('r', [{ $ne: null } as unknown as string], now + LEASE)).rejects.toThrow();
      expect(await store.status(now)).toMatchObject({ pending: 1, deadLetters: 0 });
      expect(await store.ack('r', [id])).toBe(1);
    });
  });
}
