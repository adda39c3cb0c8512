// OutboxRelay on real time, over one store: a slow aggregate holds up no other, a handler
// slower than the lease keeps its claim (renewed) with a second relay running, and a handler
// past handlerTimeoutMs takes the retry path to a dead letter. Each bound is a multiple of the
// time it guards, so a loaded machine passes; the relay before lanes, renewals and timeouts
// misses each by seconds.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSyncEvent, IRepository } from '@ddd-kit/repository';
import { OutboxRelay, type OutboxRelayOptions, type OutboxStore } from '@ddd-kit/repository/outbox';
import { Counter } from './counter.aggregate.js';

export interface RelayTimingTarget {
  store: OutboxStore;
  /** A Counter repository whose writes store their events in `store`. */
  repository: IRepository<string, Counter>;
  /** True when the store wakes the relay on a write (watch); else the relay finds it by polling. */
  wakes: boolean;
  close(): Promise<void>;
}

const tag = (e: DataSyncEvent) => `${String(e.id)}@${e.version}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 20 ms; fails saying what it waited for after `limitMs`. */
async function until(what: string, condition: () => boolean | Promise<boolean>, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${limitMs} ms for ${what}`);
    await sleep(20);
  }
}

export function describeRelayTiming(name: string, setup: () => Promise<RelayTimingTarget>): void {
  describe(`OutboxRelay on real time: ${name}`, () => {
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

    it("one aggregate's 3 s handler delays another aggregate's events by less than a poll interval", async () => {
      const POLL = 1_000;
      const SLOW = 3_000;
      let slowEntered = false;
      let slowEndedAt = Number.POSITIVE_INFINITY;
      const deliveredAt = new Map<string, number>();
      const fast = relay({
        pollIntervalMs: POLL,
        deliver: async (_aggregate, events) => {
          if (events[0].id === 'slow') {
            slowEntered = true;
            await sleep(SLOW);
            slowEndedAt = Date.now();
          }
          for (const event of events) deliveredAt.set(tag(event), Date.now());
        },
      });
      await fast.start();
      await write('slow', 1);
      await until('the slow handler to start', () => slowEntered);
      // Written while the slow handler runs: the next claim (woken, or at the next poll) takes them.
      const writtenAt = new Map<string, number>();
      for (const id of ['b', 'c']) {
        const counter = await write(id, 1);
        writtenAt.set(`${id}@1`, Date.now());
        counter.increment();
        await target.repository.update(counter);
        writtenAt.set(`${id}@2`, Date.now());
      }
      await until('b and c to be delivered', () => [...writtenAt.keys()].every((t) => deliveredAt.has(t)));
      const lags = [...writtenAt].map(([t, at]) => deliveredAt.get(t)! - at);
      // A store that cannot wake the relay adds up to one poll of its own before the claim.
      const bound = target.wakes ? POLL : 2 * POLL;
      expect(Math.max(...lags)).toBeLessThan(bound);
      // And not merely fast: delivered while the slow handler still ran.
      for (const t of writtenAt.keys()) expect([t, deliveredAt.get(t)! < slowEndedAt]).toEqual([t, true]);
      await until('the slow aggregate to be delivered', () => deliveredAt.has('slow@1'));
      await until('the outbox to empty', nothingPending);
    }, 60_000);

    it('a handler running 3 × leaseMs is delivered once, in order, with a second relay running', async () => {
      // Renewals come every third of the lease: only a stall of two thirds of it (1.3 s) lets it lapse.
      const LEASE = 2_000;
      const entered: string[] = [];
      let slowEntered = false;
      const deliver = (by: string) => async (_aggregate: string, events: readonly DataSyncEvent[]) => {
        entered.push(...events.map((e) => `${tag(e)} by ${by}`));
        if (events[0].version === 1) {
          slowEntered = true;
          await sleep(3 * LEASE);
        }
      };
      const counter = await write('a', 3);
      const first = relay({ owner: 'first', leaseMs: LEASE, pollIntervalMs: 100, deliver: deliver('first') });
      await first.start();
      await until('the slow handler to start', () => slowEntered);
      // The second relay polls often: a lease that lapsed would be its at once.
      const second = relay({ owner: 'second', leaseMs: LEASE, pollIntervalMs: 50, deliver: deliver('second') });
      await second.start();
      counter.increment();
      await target.repository.update(counter); // a@4 waits behind the slow a@1
      // Done when the outbox is empty; or as soon as an event came twice (the lease lapsed).
      const versions = () => entered.map((e) => e.split(' ')[0]);
      await until(
        'every event to be delivered',
        async () => new Set(versions()).size < entered.length || (await nothingPending()),
      );
      expect(versions()).toEqual(['a@1', 'a@2', 'a@3', 'a@4']);
      expect(entered[0]).toBe('a@1 by first');
      expect(first.counters.lost + second.counters.lost).toBe(0);
    }, 60_000);

    it('a handler that exceeds its timeout is retried, then dead-lettered; other aggregates go on', async () => {
      const TIMEOUT = 300;
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
      await write('hung', 1);
      await timed.start();
      await write('fine', 1);
      await until('a dead letter', async () => (await target.store.status(Date.now())).deadLetters === 1);
      const [letter] = await target.store.listDeadLetters();
      expect(letter).toMatchObject({ aggregateId: 'hung', version: 1, attempts: 2 });
      expect(letter.lastError).toMatch(
        /^OutboxHandlerTimeoutError: .*v1 did not settle within handlerTimeoutMs \(300 ms\)$/,
      );
      expect(calls).toBe(2);
      expect(timed.counters).toMatchObject({ failed: 2, deadLettered: 1 });
      expect(delivered).toContain('fine@1');
    }, 60_000);
  });
}
