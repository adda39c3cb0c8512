import { expect, it } from '@jest/globals';
import { LEASE, type OutboxStoreContractContext } from './contract-context.js';

/**
 * Claims and their leases: one owner per instance, in version order, renewed by their owner only.
 * (Cases of describeOutboxStoreContract, see ../outbox-store.contract.ts.)
 */
export function describeClaimCases(context: OutboxStoreContractContext): void {
  const { writeVersions, claim, ids } = context;
  it('a live lease keeps an instance from every other claim (the same owner included) until it expires', async () => {
    const { store } = context.target();
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
    const { store } = context.target();
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
    const { store } = context.target();
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
    const { store, repository } = context.target();
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
}
