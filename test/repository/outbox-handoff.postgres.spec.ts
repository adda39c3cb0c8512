// The PostgreSQL outbox hands a write's events to the relay of the writing process as the
// write commits, claimed by the write's own statement: no claim statement, no wait for a
// wake-up. Only an instance with nothing pending is handed off (its new events are then its
// head), only to a relay with room, and never before the commit; a relay that stopped in between
// gives the events back. Each case runs with a poll far longer than the test, and without
// LISTEN/NOTIFY: only the hand-off (or the relay's first round) can deliver quickly.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSyncEvent } from '@ddd-kit/repository';
import { OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { postgresSchema } from '../support/servers.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';
import { waitFor } from '../support/wait.js';
import { observedPool } from './support/postgres.support.js';

/** A Counter whose writes hold their UPSERT until `until`. */
class HeldCounter extends Counter {
  constructor(
    id: string,
    label: string,
    private readonly until: number,
  ) {
    super(id, label);
  }

  override triggerDataSyncHook(): void {
    const snapshot = this.toSnapshot();
    this.collectDataSyncEvent(
      DataSyncEvent.upsert(this.aggregateTypeName(), this.id, this.newVersion, snapshot, { availableAt: this.until }),
    );
  }
}

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
let tables = 0;
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  schema = await postgresSchema('outbox_handoff');
  pool = new pg.Pool({ connectionString: schema.url, max: 8 });
});
afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
});
afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

/** A repository and its outbox on tables of their own, on `on` (default: the test pool). */
async function setUp(on: pg.Pool = pool) {
  const n = ++tables;
  const store = new PostgresOutboxStore({ pool: on, table: `outbox_${n}`, notifyChannel: false });
  const repository = new CounterPostgresRepository({
    aggregate: Counter,
    pool: on,
    table: `counters_${n}`,
    outbox: store,
  });
  await repository.ensureTable();
  await store.ensureTable();
  const ownerOf = async (version: number, id = 'h') =>
    (
      await pool.query<{ owner: string | null }>(
        `SELECT owner FROM outbox_${n} WHERE aggregate_id = $1 AND version = $2`,
        [id, version],
      )
    ).rows[0]?.owner;
  return { store, repository, ownerOf, table: `outbox_${n}` };
}

/** A started relay whose handler records what it got (and the stored owner of each event, read before the ack). */
async function relayOn(
  store: PostgresOutboxStore,
  options: {
    batchSize?: number;
    leaseMs?: number;
    clock?: () => number;
    handler?: (events: readonly DataSyncEvent[]) => Promise<void>;
  } = {},
) {
  const delivered: string[] = [];
  const relay = new OutboxRelay({
    stores: [store],
    owner: `handoff-${tables}`,
    pollIntervalMs: 600_000,
    autoStart: false,
    ...options,
    deliver: async (_aggregate, events) => {
      await options.handler?.(events);
      for (const event of events) delivered.push(`${String(event.id)}@${event.version}`);
    },
  });
  relays.push(relay);
  await relay.start();
  return { relay, delivered };
}

describe('PostgresOutboxStore: a write handed to the relay of its own process', () => {
  it('is stored claimed by that relay and delivered without a claim statement', async () => {
    const observed = observedPool(pool);
    const { store, repository, ownerOf } = await setUp(observed.pool);
    const owners: Array<string | null | undefined> = [];
    const got: DataSyncEvent[] = [];
    const { relay, delivered } = await relayOn(store, {
      handler: async (events) => {
        got.push(...events);
        owners.push(await ownerOf(events[0].version));
      },
    });
    observed.sent.length = 0;
    const counter = new Counter('h', 'handed off');
    const acked = async () => (await store.status(Date.now())).pending === 0;
    await repository.insert(counter);
    await waitFor('the first delivery and its ack', async () => delivered.length === 1 && (await acked()));
    counter.increment();
    await repository.update(counter);
    await waitFor('the second delivery and its ack', async () => delivered.length === 2 && (await acked()));
    expect(delivered).toEqual(['h@1', 'h@2']);
    // Leased to the relay from the write on; no claim was sent for them.
    expect(owners).toEqual([relay.owner, relay.owner]);
    expect(observed.sent.filter((s) => /WITH heads AS/.test(s.text))).toEqual([]);
    // The event as any other path delivers it: what the write stored, read back.
    expect(got.map((event) => Object.keys(event))).toEqual([
      ['type', 'eventId', 'aggregate', 'id', 'version', 'snapshot'],
      ['type', 'eventId', 'aggregate', 'id', 'version', 'snapshot'],
    ]);
    expect(got[1]).toMatchObject({ type: 'UPSERT', aggregate: 'Counter', id: 'h', version: 2 });
    expect(got[1]).toHaveProperty('snapshot', { id: 'h', label: 'handed off', count: 1, tags: [] });
    expect(Object.isFrozen(got[1])).toBe(true);
  });

  it('a write while its instance is still being delivered is claimed after that lane ends, in order', async () => {
    const { store, repository, ownerOf } = await setUp();
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    const { delivered } = await relayOn(store, { handler: () => blocked });
    const counter = new Counter('h', 'busy');
    await repository.insert(counter);
    await waitFor('the first lane', async () => (await ownerOf(1)) !== null);
    counter.increment();
    await repository.update(counter); // version 1 still pending: stored unclaimed
    expect(await ownerOf(2)).toBeNull();
    unblock();
    await waitFor('both deliveries', () => delivered.length === 2);
    expect(delivered).toEqual(['h@1', 'h@2']);
  });

  it("a write handed off between its instance's last ack and the end of that lane: given back by the lane, then claimed at once", async () => {
    const { store, repository, ownerOf } = await setUp();
    // Holds the lane after its last ack has committed, as a slow reply or a busy event loop would.
    let ackedLast!: () => void;
    const lastAcked = new Promise<void>((resolve) => (ackedLast = resolve));
    let letLaneEnd!: () => void;
    const laneMayEnd = new Promise<void>((resolve) => (letLaneEnd = resolve));
    const ack = store.ack.bind(store);
    store.ack = async (...args) => {
      const count = await ack(...args);
      ackedLast();
      await laneMayEnd;
      return count;
    };
    const { relay, delivered } = await relayOn(store);
    const counter = new Counter('h', 'between');
    await repository.insert(counter);
    await lastAcked;
    // Nothing pending, so the write is stored already claimed and handed to the relay, whose lane for h still runs.
    counter.increment();
    await repository.update(counter);
    // Handed off; the lane gives it back after its ack (its store calls run one at a time).
    expect(await ownerOf(2)).toBe(relay.owner);
    letLaneEnd();
    // The relay polls every 10 minutes: only a wake-up once they are given back delivers them now.
    await waitFor('both deliveries', () => delivered.length === 2);
    expect(delivered).toEqual(['h@1', 'h@2']);
    await waitFor('the outbox to empty', async () => (await store.status(Date.now())).pending === 0);
  });

  it('an instance with an event pending elsewhere is not handed off: its next write waits behind it, in order', async () => {
    const { store, repository, ownerOf } = await setUp();
    const counter = new Counter('h', 'held');
    await repository.insert(counter);
    // Another relay holds version 1 (its handler still running, say).
    const [held] = await store.claim({ owner: 'elsewhere', limit: 10, leaseMs: 60_000, now: Date.now() });
    expect(held.events.map((e) => e.version)).toEqual([1]);
    const { relay, delivered } = await relayOn(store);
    // Every claim of the relay's, with what it got.
    const claims: Array<Promise<unknown[]>> = [];
    const claim = store.claim.bind(store);
    store.claim = (request) => {
      const claimed = claim(request);
      claims.push(claimed);
      return claimed;
    };
    counter.increment();
    await repository.update(counter);
    expect(await ownerOf(2)).toBeNull();
    // The write woke the relay (in process): the claim it made then got nothing.
    expect(await waitFor('the claim of the woken relay', () => claims[0])).toEqual([]);
    expect(delivered).toEqual([]); // version 2 waits behind version 1
    expect(await relay.runOnce()).toBe(0); // and no claim takes it while version 1 is held
    await store.ack('elsewhere', [held.events[0].eventId]);
    expect(await relay.runOnce()).toBe(1);
    expect(delivered).toEqual(['h@2']);
  });

  it('in a transaction: handed off after the commit, never after a rollback', async () => {
    const { store, repository } = await setUp();
    const { delivered } = await relayOn(store);
    await runInTransaction(pool, async () => {
      await repository.insert(new Counter('t', 'committed'));
      // A hand-off reaches the handler within the microtasks that follow it (no I/O in between):
      // one turn of the event loop lets one made too early be seen.
      await new Promise((resolve) => setImmediate(resolve));
      expect(delivered).toEqual([]);
    });
    await waitFor('the delivery after the commit', () => delivered.length === 1);
    expect(delivered).toEqual(['t@1']);
    // Its ack follows the handler: wait for it, or it would count as pending below.
    await waitFor('the ack of t@1', async () => (await store.status(Date.now())).pending === 0);
    await expect(
      runInTransaction(pool, async () => {
        await repository.insert(new Counter('r', 'rolled back'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // A round trip first: a hand-off made at the rollback would have reached the handler by then.
    expect((await store.status(Date.now())).pending).toBe(0);
    expect(delivered).toEqual(['t@1']);
  });

  it('a write that began before its relay stopped and committed after: its events are given back, not left leased', async () => {
    const { store, repository, ownerOf } = await setUp();
    const { relay, delivered } = await relayOn(store);
    let written!: () => void;
    const didWrite = new Promise<void>((resolve) => (written = resolve));
    let commit!: () => void;
    const mayCommit = new Promise<void>((resolve) => (commit = resolve));
    // The use case's transaction on one path, the application's shutdown on another.
    const useCase = runInTransaction(pool, async () => {
      await repository.insert(new Counter('h', 'straddling the stop'));
      written();
      await mayCommit;
    });
    await didWrite;
    await relay.stop();
    commit();
    await useCase;
    await waitFor('the release', async () => (await ownerOf(1)) === null);
    expect(delivered).toEqual([]);
    // Claimable at once by any relay, not after a lease.
    expect(await store.claim({ owner: 'next', limit: 1, leaseMs: 1000, now: Date.now() })).toHaveLength(1);
  });

  it('a relay with no room gets nothing handed off: the write is stored unclaimed and claimed when a lane frees', async () => {
    const { store, repository, ownerOf } = await setUp();
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    let slowEntered!: () => void;
    const entered = new Promise<void>((resolve) => (slowEntered = resolve));
    const { delivered } = await relayOn(store, {
      batchSize: 1,
      handler: async (events) => {
        if (String(events[0].id) !== 'slow') return;
        slowEntered();
        await blocked;
      },
    });
    await repository.insert(new Counter('slow', 'holds the only lane'));
    await waitFor('the slow handler to hold the only lane', entered);
    await repository.insert(new Counter('h', 'no room'));
    expect(await ownerOf(1)).toBeNull();
    unblock();
    await waitFor('both deliveries', () => delivered.length === 2);
    expect(delivered).toEqual(['slow@1', 'h@1']);
  });

  describe('under a fault', () => {
    let proxy: FaultProxy;
    let proxied: pg.Pool;
    beforeAll(async () => {
      const through = await proxyUrl('postgres', schema.url);
      proxy = through.proxy;
      proxied = new pg.Pool({ connectionString: through.url, max: 4 });
      proxied.on('error', () => undefined);
    });
    afterAll(async () => {
      await proxied?.end().catch(() => undefined);
      await proxy?.close();
    });

    it('the reply to a handed-off write lost: the caller gets an error, and the event is still delivered once its lease ran out', async () => {
      const { store, repository, ownerOf } = await setUp(proxied);
      // The lease runs on the relay's clock, moved by hand (ahead of the writes' stamps).
      const LEASE = 30_000;
      let now = Date.now() + 60_000;
      const { relay, delivered } = await relayOn(store, { leaseMs: LEASE, clock: () => now });
      proxy.dropReply({ match: /^WITH w AS \(INSERT/ });
      await expect(repository.insert(new Counter('h', 'reply lost'))).rejects.toThrow();
      proxy.clear();
      // It committed, claimed by the relay, which never heard of it.
      expect(await ownerOf(1)).toBe(relay.owner);
      expect(delivered).toEqual([]);
      // Nobody claims it while its lease holds; the moment it ran out, a claim takes it.
      now += LEASE - 1;
      expect(await relay.runOnce()).toBe(0);
      now += 1;
      expect(await relay.runOnce()).toBe(1);
      expect(delivered).toEqual(['h@1']);
    });
  });

  it('a write holding its event until later (availableAt) is not handed off: stored unclaimed, delivered once due', async () => {
    const { store, repository, ownerOf } = await setUp();
    let now = Date.now();
    const until = now + 60_000;
    const { relay, delivered } = await relayOn(store, { clock: () => now });
    await repository.insert(new HeldCounter('h', 'later', until));
    expect(await ownerOf(1)).toBeNull();
    expect(await relay.runOnce()).toBe(0);
    now = until;
    await relay.runOnce();
    expect(delivered).toEqual(['h@1']);
  });
});
