// OutboxRelay against the in-process store: delivery, order, retries, dead letters, leases and
// shutdown, on a fake clock (no case waits for time to pass).
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AbstractRepository,
  OnDataSync,
  RepositoryModule,
  getRepositoryToken,
  type DataSyncEvent,
  type IRepository,
} from '../index.js';
import { RepositoryConfigurationError } from '../errors.js';
import { InMemoryReadReplica } from '../reconciliation/index.js';
import { Counter, type CounterSnapshot } from '../testing/counter.aggregate.js';
import { waitFor } from '../../../../test/support/wait.js';
import { OutboxRelay } from './index.js';
import { setup, tag, writeVersions } from './__tests__/outbox-relay.fixture.js';

describe('OutboxRelay (in-process store, fake clock)', () => {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (stops.length > 0) await stops.pop()!();
  });

  it('with the outbox, a write publishes nothing in process; the relay delivers every event once, in version order per aggregate', async () => {
    const s = setup();
    s.bus.subscribe(Counter, (events) => void s.received.push(...events.map(tag)));
    await writeVersions(s.repository, 'a', 3);
    await writeVersions(s.repository, 'b', 2);
    expect(s.received).toEqual([]);
    expect(await s.relay().status()).toEqual({
      pending: 5,
      oldestPendingAgeMs: expect.any(Number),
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
    const relay = s.relay();
    expect(await relay.drain()).toBe(2);
    expect(s.received.filter((t) => t.startsWith('a'))).toEqual(['a@1', 'a@2', 'a@3']);
    expect(s.received.filter((t) => t.startsWith('b'))).toEqual(['b@1', 'b@2']);
    expect(relay.counters).toEqual({ delivered: 5, failed: 0, deadLettered: 0, lost: 0 });
    expect(await relay.status()).toEqual({
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
  });

  it('a failure stops its aggregate (later versions wait), retries with a doubling backoff, then delivers in order', async () => {
    const s = setup();
    let failures = 2;
    s.bus.subscribe(Counter, (events) => {
      if (events[0].id === 'a' && failures > 0) {
        failures--;
        throw new Error('read model down');
      }
      s.received.push(...events.map(tag));
    });
    await writeVersions(s.repository, 'a', 2);
    await writeVersions(s.repository, 'b', 1);
    const relay = s.relay();
    await relay.drain();
    expect(s.received).toEqual(['b@1']); // a@1 failed, a@2 waits behind it
    s.clock.now += 999;
    expect(await relay.runOnce()).toBe(0); // backoff: 1000 ms after the first failure
    s.clock.now += 1;
    await relay.drain();
    expect(s.received).toEqual(['b@1']); // second failure: 2000 ms now
    s.clock.now += 1999;
    expect(await relay.runOnce()).toBe(0);
    s.clock.now += 1;
    await relay.drain();
    expect(s.received).toEqual(['b@1', 'a@1', 'a@2']);
    expect(relay.counters).toMatchObject({ delivered: 3, failed: 2, deadLettered: 0 });
  });

  it('after maxAttempts an event is a dead letter: listed, counted, its aggregate goes on, and a replay delivers it again', async () => {
    const s = setup({ maxAttempts: 2 });
    const replica = new InMemoryReadReplica<string, CounterSnapshot>();
    let broken = true;
    s.bus.subscribe(Counter, (events) => {
      if (broken && events[0].version === 1) throw new Error('poison');
      replica.apply(events);
      s.received.push(...events.map(tag));
    });
    await writeVersions(s.repository, 'a', 2);
    const relay = s.relay();
    await relay.drain();
    s.clock.now += 1000;
    await relay.drain();
    // Dead after two attempts; a@2 went on.
    expect(s.received).toEqual(['a@2']);
    expect(await relay.status()).toMatchObject({ pending: 0, deadLetters: 1 });
    const [letter] = await relay.listDeadLetters();
    expect(letter).toMatchObject({
      aggregate: 'Counter',
      aggregateId: 'a',
      version: 1,
      attempts: 2,
      lastError: 'Error: poison',
    });
    broken = false;
    expect(await relay.replayDeadLetters([letter.eventId])).toBe(1);
    await relay.drain();
    expect(s.received).toEqual(['a@2', 'a@1']);
    // Delivered late, a@1 is older than what the replica holds: it changes nothing.
    expect(replica.get('a')!.version).toBe(2);
    expect(await relay.status()).toEqual({
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
  });

  it('a relay that stopped answering keeps its claim only until the lease expires; then another relay delivers, and the first can no longer ack', async () => {
    const s = setup({ leaseMs: 10_000 });
    let hang: (() => void) | undefined;
    const hungDeliveries: string[] = [];
    await writeVersions(s.repository, 'a', 2);
    const crashed = new OutboxRelay({
      stores: [s.store],
      clock: s.clock.read,
      autoStart: false,
      leaseMs: 10_000,
      deliver: (_aggregate, events) => {
        hungDeliveries.push(...events.map(tag));
        return new Promise<void>((resolve) => (hang = resolve));
      },
    });
    const stuck = crashed.runOnce();
    await waitFor('the handler of a@1 to be entered', () => hang !== undefined);
    expect(hungDeliveries).toEqual(['a@1']);
    s.bus.subscribe(Counter, (events) => void s.received.push(...events.map(tag)));
    const rescuer = s.relay({ leaseMs: 10_000 });
    expect(await rescuer.runOnce()).toBe(0);
    s.clock.now += 9_999;
    expect(await rescuer.runOnce()).toBe(0);
    s.clock.now += 1;
    await rescuer.drain();
    expect(s.received).toEqual(['a@1', 'a@2']);
    hang!();
    await stuck;
    expect(crashed.counters.lost).toBe(1);
    expect(hungDeliveries).toEqual(['a@1']); // it did not go on to a@2 without its lease
  });

  it('a relay whose lease lapsed under a running handler (renewals failing) and claims the instance again does not deliver it twice at once', async () => {
    const s = setup({ leaseMs: 10_000 });
    // The store cannot renew (say it is briefly unreachable): the lease runs out under the handler.
    const failingRenew = Object.assign(Object.create(s.store) as typeof s.store, {
      renew: async () => {
        throw new Error('store unreachable');
      },
    });
    let hang: (() => void) | undefined;
    const entered: string[] = [];
    const relay = s.relay({
      stores: [failingRenew],
      deliver: (_aggregate, events) => {
        entered.push(...events.map(tag));
        if (hang !== undefined || events[0].version !== 1) return Promise.resolve();
        return new Promise<void>((resolve) => (hang = resolve));
      },
    });
    const counter = await writeVersions(s.repository, 'a', 2);
    const first = relay.runOnce();
    await waitFor('the handler of a@1 to be entered', () => hang !== undefined);
    s.clock.now += 10_000;
    counter.increment();
    await s.repository.update(counter); // a@3, written after the first claim
    // Its own next round gets the instance again: the lane running keeps it, a@1 is not re-entered.
    expect(await relay.runOnce()).toBe(1);
    expect(entered).toEqual(['a@1']);
    hang!();
    await first;
    await relay.drain();
    expect(entered).toEqual(['a@1', 'a@2', 'a@3']);
    expect(relay.counters).toMatchObject({ delivered: 3, lost: 0 });
  });

  it('shutdown finishes the write in progress, releases the rest at once, and the relay does not claim again', async () => {
    const s = setup();
    let release: (() => void) | undefined;
    const entered: string[] = [];
    s.bus.subscribe(Counter, async (events) => {
      entered.push(...events.map(tag));
      if (events[0].version === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    await writeVersions(s.repository, 'a', 3);
    const relay = s.relay({ pollIntervalMs: 60_000 });
    await relay.start();
    await waitFor('the handler of a@1 to be entered', () => release !== undefined);
    const stopped = relay.stop();
    release!();
    await stopped;
    expect(entered).toEqual(['a@1']);
    expect(await relay.status()).toMatchObject({ pending: 2 });
    // Released, not merely expired: another relay takes a@2 and a@3 at the same instant.
    const next = s.relay();
    s.bus.subscribe(Counter, (events) => void s.received.push(...events.map(tag)));
    await next.drain();
    expect(s.received).toEqual(['a@2', 'a@3']);
    expect(await relay.runOnce()).toBe(0);
  });

  it('shutdown does not wait for ever on a handler that hangs: after shutdownTimeoutMs the claim is released', async () => {
    const s = setup({ shutdownTimeoutMs: 20 });
    let entered = false;
    s.bus.subscribe(Counter, () => {
      entered = true;
      return new Promise(() => undefined);
    });
    await writeVersions(s.repository, 'a', 2);
    const relay = s.relay({ pollIntervalMs: 60_000 });
    await relay.start();
    await waitFor('the handler to be entered', () => entered);
    await relay.stop();
    const [claim] = await s.store.claim({ owner: 'other', now: s.clock.now, limit: 10, leaseMs: 1000 });
    expect(claim.events.map((e) => e.version)).toEqual([1, 2]);
  });

  it('refuses settings that cannot work', () => {
    const s = setup();
    expect(() => s.relay({ maxAttempts: 0 })).toThrow(RepositoryConfigurationError);
    expect(() => s.relay({ leaseMs: -1 })).toThrow(RepositoryConfigurationError);
    expect(() => new OutboxRelay({ stores: [], deliver: async () => undefined })).toThrow(RepositoryConfigurationError);
    expect(() => s.relay({ handlerTimeoutMs: 0 })).toThrow(RepositoryConfigurationError);
    // A store written before renew existed: refused up front, not found out under a slow handler.
    const { renew: _renew, ...withoutRenew } = Object.fromEntries(
      ['claim', 'ack', 'fail', 'release', 'status', 'renew'].map((m) => [m, async () => undefined]),
    );
    expect(() => s.relay({ stores: [withoutRenew as never] })).toThrow(/no renew/);
  });
});

/** A repository of a backend of its own, which has no outbox store. */
class CounterCustomRepository extends AbstractRepository<string, Counter> {
  protected async doInsert(): Promise<void> {}
  protected async doUpdate(): Promise<void> {}
  protected async doRemove(): Promise<void> {}
}

@Injectable()
class Projection {
  readonly received: string[] = [];
  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent[]): void {
    this.received.push(...events.map(tag));
  }
}

describe('RepositoryModule.forRoot({ outbox })', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('off (the default): the write publishes in process, as before; no relay', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RepositoryModule.forRoot({}), RepositoryModule.forFeature([Counter])],
      providers: [Projection],
    }).compile();
    app = await moduleRef.init();
    await app.get<IRepository<string, Counter>>(getRepositoryToken(Counter)).insert(new Counter('a', 'x'));
    expect(app.get(Projection).received).toEqual(['a@1']);
    expect(app.get(OutboxRelay, { strict: false })).toBeNull();
  });

  it('on, relay off in this process: writes store their events, the relay (injectable) reports and delivers them', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RepositoryModule.forRoot({ outbox: { relay: false } }), RepositoryModule.forFeature([Counter])],
      providers: [Projection],
    }).compile();
    app = await moduleRef.init();
    const counters = app.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
    await writeVersions(counters, 'a', 2);
    const relay = app.get(OutboxRelay);
    expect(app.get(Projection).received).toEqual([]);
    expect(await relay.status()).toMatchObject({ pending: 2, deadLetters: 0 });
    await relay.drain();
    expect(app.get(Projection).received).toEqual(['a@1', 'a@2']);
  });

  it('on: the relay started by the module delivers without being asked', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RepositoryModule.forRoot({ outbox: true }), RepositoryModule.forFeature([Counter])],
      providers: [Projection],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await app.get<IRepository<string, Counter>>(getRepositoryToken(Counter)).insert(new Counter('a', 'x'));
    const projection = app.get(Projection);
    await waitFor('the relay to deliver', () => projection.received.length > 0);
    expect(projection.received).toEqual(['a@1']);
  });

  it('refuses bad outbox options, and a repository whose backend has no outbox store', async () => {
    expect(() => RepositoryModule.forRoot({ outbox: { maxAttempts: 0 } })).toThrow(RepositoryConfigurationError);
    expect(() => RepositoryModule.forRoot({ outbox: { table: 'x; DROP' } })).toThrow(RepositoryConfigurationError);
    expect(() => RepositoryModule.forRoot({ outbox: 'yes' as never })).toThrow(RepositoryConfigurationError);
    const moduleRef = Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ outbox: true }),
        RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterCustomRepository }]),
      ],
    }).compile();
    await expect(moduleRef).rejects.toThrow(/has no outbox store/);
  });
});
