import { expect, it } from '@jest/globals';
import type { OutboxStoreContractContext } from './contract-context.js';

/**
 * What a relay reports back: ack, fail (retries, then a dead letter) and release.
 * (Cases of describeOutboxStoreContract, see ../outbox-store.contract.ts.)
 */
export function describeDeliveryCases(context: OutboxStoreContractContext): void {
  const { writeVersions, claim, ids } = context;
  it('ack removes only events leased to the owner', async () => {
    const { store } = context.target();
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
    const { store, repository } = context.target();
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
    const { store, repository } = context.target();
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
    const { store } = context.target();
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
}
