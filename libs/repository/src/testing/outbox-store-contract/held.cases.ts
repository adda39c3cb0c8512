import { expect, it } from '@jest/globals';
import { HeldCounter, type OutboxStoreContractContext } from './contract-context.js';

/**
 * Events held until a time (`event.availableAt`): stored not due, holding their instance's later
 * events behind them. (Cases of describeOutboxStoreContract, see ../outbox-store.contract.ts.)
 */
export function describeHeldCases(context: OutboxStoreContractContext): void {
  const { claim } = context;
  it("an event held until availableAt is not claimed before it, and the instance's later events wait behind it", async () => {
    const { store, repository } = context.target();
    const until = Date.now() + 60_000;
    const counter = new HeldCounter('h', 'held').hold(until);
    await repository.insert(counter); // v1, held
    counter.hold(undefined).increment();
    await repository.update(counter); // v2, due at once but behind v1
    const now = Date.now();
    expect(await claim('r', now)).toEqual([]);
    expect(await claim('r', until - 1)).toEqual([]);
    const status = await store.status(now);
    // Held: pending, but not waiting yet; v2 waits (behind it) from its write.
    expect(status.pending).toBe(2);
    const [c] = await claim('r', until);
    expect(c.events.map((e) => [e.version, e.nextAttemptAt === until, e.event.availableAt === until])).toEqual([
      [1, true, true],
      [2, false, false],
    ]);
    expect(c.events[1].nextAttemptAt).toBeLessThanOrEqual(now);
  });

  it('one held event holds the whole write it came with: its events are due together', async () => {
    const { repository } = context.target();
    const until = Date.now() + 60_000;
    await repository.insert(new HeldCounter('w', 'two events').hold(until, true));
    expect(await claim('r', Date.now())).toEqual([]);
    const [c] = await claim('r', until);
    expect(c.events.map((e) => [e.version, e.nextAttemptAt, e.event.availableAt])).toEqual([
      [1, until, undefined],
      [1, until, until],
    ]);
  });

  it('an availableAt already past is due at once; status ages a held event from availableAt, not from its write', async () => {
    const { store, repository } = context.target();
    const before = Date.now();
    await repository.insert(new HeldCounter('past', 'p').hold(1));
    const [c] = await claim('r', Date.now());
    expect(c.events[0].nextAttemptAt).toBe(c.events[0].storedAt);
    expect(await store.release('r')).toBe(1);
    const until = before + 5_000;
    await repository.insert(new HeldCounter('later', 'l').hold(until));
    // Only 'past' waits before `until`; from then on 'later' waits too, from `until`.
    expect((await store.status(until - 1)).oldestPendingAgeMs).toBe(until - 1 - c.events[0].storedAt);
    const [past] = await claim('r', until - 1);
    expect(await store.ack('r', [past.events[0].eventId])).toBe(1);
    expect(await store.status(until - 1)).toMatchObject({ pending: 1, oldestPendingAgeMs: null });
    expect(await store.status(until + 7)).toMatchObject({ pending: 1, oldestPendingAgeMs: 7 });
  });

  it('a write whose event holds no time (availableAt not an epoch-ms integer) is refused and stores nothing', async () => {
    const { store, repository } = context.target();
    for (const bad of [Number.NaN, -1, 1.5, '2030-01-01', { $gt: 0 }]) {
      await expect(repository.insert(new HeldCounter(`bad`, 'b').hold(bad))).rejects.toThrow(/availableAt/);
    }
    expect(await repository.findById('bad')).toBeNull();
    const counter = new HeldCounter('ok', 'fine');
    await repository.insert(counter);
    counter.hold(Number.POSITIVE_INFINITY).increment();
    await expect(repository.update(counter)).rejects.toThrow(/availableAt/);
    expect(await repository.currentVersion('ok')).toBe(1);
    expect(await store.status(Date.now())).toMatchObject({ pending: 1 });
  });
}
