import { expect, it } from '@jest/globals';
import type { OutboxStoreContractContext } from './contract-context.js';
import type { OutboxStatus } from '../../outbox/outbox.interfaces.js';

/**
 * The operator's calls: status, and dead letters listed and replayed.
 * (Cases of describeOutboxStoreContract, see ../outbox-store.contract.ts.)
 */
export function describeOperatorCases(context: OutboxStoreContractContext): void {
  const { writeVersions, claim } = context;
  it('status counts pending events (leased or not) and dead letters, and ages the oldest pending one', async () => {
    const { store } = context.target();
    expect(counts(await store.status(Date.now()))).toEqual({
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
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
    const { store } = context.target();
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
    expect(counts(await store.status(now + 100))).toEqual({
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 2,
      oldestDeadLetterAgeMs: 100,
    });
  });
}

/** A status without what a store reports beside the counts (a replication slot's figures). */
function counts(status: OutboxStatus): Omit<OutboxStatus, 'slots'> {
  const { slots: _slots, ...rest } = status;
  return rest;
}
