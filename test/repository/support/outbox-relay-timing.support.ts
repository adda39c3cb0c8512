// OutboxRelay running (its loop, lanes, renewals and handler timeouts) over one store: a slow
// aggregate holds up no other, a handler that outlives three leases keeps its claim (renewed)
// while a second relay tries to claim, and a handler past handlerTimeoutMs takes the retry path
// to a dead letter. Nothing here waits a fixed time: a slow handler is held until the test lets
// it go, leases run on the relays' clock (moved by hand), and each wait is for the event itself.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSyncEvent, IRepository } from '@ddd-kit/repository';
import { OutboxRelay, type OutboxRelayOptions, type OutboxStore } from '@ddd-kit/repository/outbox';
import { waitFor } from '../../support/wait.js';
import { Counter } from './counter.aggregate.js';

export interface RelayTimingTarget {
  store: OutboxStore;
  /** A Counter repository whose writes store their events in `store`. */
  repository: IRepository<string, Counter>;
  /** True when the store wakes the relay on a write (watch, hand-off); else the relay finds it by polling. */
  wakes: boolean;
  close(): Promise<void>;
}

const tag = (e: DataSyncEvent) => `${String(e.id)}@${e.version}`;

/** A promise and the function that settles it. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

export function describeRelayTiming(name: string, setup: () => Promise<RelayTimingTarget>): void {
  describe(`OutboxRelay running: ${name}`, () => {
    let target: RelayTimingTarget;
    const relays: OutboxRelay[] = [];
    beforeEach(async () => {
      target = await setup();
    });
    afterEach(async () => {
      await Promise.all(relays.splice(0).map((relay) => relay.stop()));
      await target?.close();
    });

    function relay(options: Partial<OutboxRelayOptions> & Pick<OutboxRelayOptions, 'deliver'>): OutboxRelay {
      const created = new OutboxRelay({
        stores: [target.store],
        autoStart: false,
        shutdownTimeoutMs: 1_000,
        ...options,
      });
      relays.push(created);
      return created;
    }

    async function write(id: string, versions: number): Promise<Counter> {
      const counter = new Counter(id, `label ${id}`);
      await target.repository.insert(counter);
      for (let v = 2; v <= versions; v++) {
        counter.increment();
        await target.repository.update(counter);
      }
      return counter;
    }

    const nothingPending = async () => (await target.store.status(Date.now())).pending === 0;

    it("one aggregate's slow handler delays no other aggregate: their events are delivered while it runs, without waiting for a poll", async () => {
      const slowEntered = signal();
      const slowMayEnd = signal();
      const delivered: string[] = [];
      const fast = relay({
        // A store that wakes the relay must deliver with no poll at all (one in ten minutes);
        // one that cannot is found by the relay's polling.
        pollIntervalMs: target.wakes ? 600_000 : 50,
        deliver: async (_aggregate, events) => {
          if (events[0].id === 'slow') {
            slowEntered.fire();
            await slowMayEnd.promise;
          }
          delivered.push(...events.map(tag));
        },
      });
      await fast.start();
      await write('slow', 1);
      await waitFor('the slow handler to start', slowEntered.promise);
      // Written while the slow handler runs: the next claim (woken, or at the next poll) takes them.
      await write('b', 2);
      await write('c', 2);
      const others = ['b@1', 'b@2', 'c@1', 'c@2'];
      // The slow handler ends only once these are delivered: a relay that waited for it never gets here.
      await waitFor('b and c to be delivered while the slow handler runs', () =>
        others.every((t) => delivered.includes(t)),
      );
      expect(delivered).not.toContain('slow@1');
      slowMayEnd.fire();
      await waitFor('the slow aggregate to be delivered', () => delivered.includes('slow@1'));
      await waitFor('the outbox to empty', nothingPending);
    });

    it('a handler running past 3 × leaseMs is delivered once, in order, while a second relay tries to claim its aggregate', async () => {
      // The lease runs on the relays' clock, moved by hand; renewals come on real time (every
      // third of leaseMs) and each reads that clock.
      const LEASE = 300;
      let now = Date.now() + 60_000; // ahead of the writes' stamps: their events are due
      const clock = () => now;
      const renewals: Array<{ at: number; until: number; renewed: number }> = [];
      const renew = target.store.renew.bind(target.store);
      target.store.renew = async (owner, eventIds, leaseUntil) => {
        const at = now;
        const renewed = await renew(owner, eventIds, leaseUntil);
        renewals.push({ at, until: leaseUntil, renewed });
        return renewed;
      };
      const entered: string[] = [];
      const slowEntered = signal();
      const slowMayEnd = signal();
      const first = relay({
        owner: 'first',
        leaseMs: LEASE,
        clock,
        pollIntervalMs: 600_000,
        deliver: async (_aggregate, events) => {
          entered.push(...events.map((e) => `${tag(e)} by first`));
          if (events[0].version === 1) {
            slowEntered.fire();
            await slowMayEnd.promise;
          }
        },
      });
      // Claims only when asked (runOnce), at each step of the clock.
      const second = relay({
        owner: 'second',
        leaseMs: LEASE,
        clock,
        deliver: async (_aggregate, events) => void entered.push(...events.map((e) => `${tag(e)} by second`)),
      });
      const counter = await write('a', 3);
      await first.start();
      await waitFor('the slow handler to start', slowEntered.promise);
      counter.increment();
      await target.repository.update(counter); // a@4 waits behind the slow a@1
      // Steps of 0.8 lease, 3.2 leases in all: each past the lease the previous renewal gave.
      for (let step = 1; step <= 4; step++) {
        now += Math.floor(0.8 * LEASE);
        expect([step, await second.runOnce()]).toEqual([step, 0]);
        const at = now;
        const renewal = await waitFor(`a renewal reading the clock at step ${step}`, () =>
          renewals.find((r) => r.at === at),
        );
        expect(renewal).toEqual({ at, until: at + LEASE, renewed: 3 });
      }
      slowMayEnd.fire();
      const versions = () => entered.map((e) => e.split(' ')[0]);
      // Done when the outbox is empty; or as soon as an event came twice.
      await waitFor(
        'every event to be delivered',
        async () => new Set(versions()).size < entered.length || (await nothingPending()),
      );
      expect(versions()).toEqual(['a@1', 'a@2', 'a@3', 'a@4']);
      expect(entered[0]).toBe('a@1 by first');
      expect(first.counters.lost + second.counters.lost).toBe(0);
    });

    it('a handler that exceeds its timeout is retried, then dead-lettered; other aggregates go on', async () => {
      const TIMEOUT = 100;
      let calls = 0;
      const delivered: string[] = [];
      const timed = relay({
        handlerTimeoutMs: TIMEOUT,
        maxAttempts: 2,
        backoff: { initialMs: 50, maxMs: 50 },
        pollIntervalMs: 50,
        deliver: async (_aggregate, events) => {
          if (events[0].id === 'hung') {
            calls++;
            return new Promise<void>(() => undefined); // never settles
          }
          delivered.push(...events.map(tag));
        },
      });
      // Both in the relay's first claim, in lanes side by side: fine@1 is delivered at once,
      // before any handler timer can fire.
      await write('hung', 1);
      await write('fine', 1);
      await timed.start();
      await waitFor('a dead letter', async () => (await target.store.status(Date.now())).deadLetters === 1);
      const [letter] = await target.store.listDeadLetters();
      expect(letter).toMatchObject({ aggregateId: 'hung', version: 1, attempts: 2 });
      expect(letter.lastError).toMatch(
        /^OutboxHandlerTimeoutError: .*v1 did not settle within handlerTimeoutMs \(100 ms\)$/,
      );
      expect(calls).toBe(2);
      expect(timed.counters).toMatchObject({ failed: 2, deadLettered: 1 });
      expect(delivered).toContain('fine@1');
    });
  });
}
