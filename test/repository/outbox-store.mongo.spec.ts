// MongoOutboxStore: the outbox kept inside each aggregate's document by a MongooseRepository
// given the store as its `outbox`, on the MongoDB-wire server of the run (the jongodb emulator
// unless MONGODB_URI names a MongoDB).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { MongoOutboxStore } from '@ddd-kit/repository/outbox';
import { mongoLabel, mongoUri, uniqueName } from '../support/servers.js';
import { Counter, CounterMongooseRepository } from './support/counter.aggregate.js';
import { describeOutboxStoreContract } from '@ddd-kit/repository/testing';

let connection: Connection;
let n = 0;
beforeAll(async () => {
  connection = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('outbox_store') }).asPromise();
});
afterAll(async () => {
  await connection?.close();
});

describeOutboxStoreContract(`MongoOutboxStore on ${mongoLabel()}`, async () => {
  const collection = `counters_${++n}`;
  const store = new MongoOutboxStore({ collections: [connection.db!.collection(collection)] });
  await store.ensureIndexes();
  const repository = new CounterMongooseRepository({ connection, collection, aggregate: Counter, outbox: store });
  return { store, repository, close: async () => void (await connection.db!.collection(collection).deleteMany({})) };
});

describe(`MongooseRepository with a MongoOutboxStore on ${mongoLabel()}: the write`, () => {
  const commands: Array<{ name: string; command: Record<string, unknown> }> = [];
  let observed: Connection;
  beforeAll(async () => {
    observed = await mongoose
      .createConnection(mongoUri(), { dbName: uniqueName('outbox_write'), monitorCommands: true })
      .asPromise();
    observed.getClient().on('commandStarted', (event) => {
      if (!['hello', 'isMaster', 'ping', 'createIndexes'].includes(event.commandName)) {
        commands.push({ name: event.commandName, command: event.command as Record<string, unknown> });
      }
    });
  });
  afterAll(async () => {
    await observed?.close();
  });

  async function setup(collection: string) {
    const store = new MongoOutboxStore();
    await store.ensureIndexes();
    const repository = new CounterMongooseRepository({
      connection: observed,
      collection,
      aggregate: Counter,
      outbox: store,
    });
    return { store, repository, raw: () => observed.db!.collection(collection).find({}).sort({ _id: 1 }).toArray() };
  }

  it('insert, update and remove are one single-document command each, carrying their events (no transaction)', async () => {
    const { repository, raw } = await setup('one_command');
    const counter = new Counter('c', 'one');
    await repository.insert(counter); // the first write resolves the collection (and its indexes)
    commands.length = 0;
    counter.increment();
    await repository.update(counter);
    expect(commands.map((c) => c.name)).toEqual(['update']);
    const [statement] = commands[0].command.updates as Array<{
      q: Record<string, unknown>;
      u: Record<string, Record<string, unknown>>;
    }>;
    expect(statement.q).toEqual({ _id: 'c', version: 1, _deleted: { $ne: true } });
    expect(Object.keys(statement.u.$set).filter((k) => k.startsWith('_outbox.'))).toHaveLength(1);
    for (const c of commands) expect(c.command.txnNumber ?? c.command.startTransaction).toBeUndefined();
    commands.length = 0;
    await repository.remove(counter);
    expect(commands.map((c) => c.name)).toEqual(['update']);
    const [document] = await raw();
    // A tombstone: no fields of the aggregate, the PURGE and the earlier events still pending.
    expect(document).toMatchObject({ _id: 'c', version: 3, _deleted: true });
    expect(document.label).toBeUndefined();
    expect(
      Object.values(document._outbox as Record<string, { event: { type: string; version: number } }>)
        .map((e) => [e.event.version, e.event.type])
        .sort(),
    ).toEqual([
      [1, 'UPSERT'],
      [2, 'UPSERT'],
      [3, 'PURGE'],
    ]);
  });

  it('a removed aggregate is invisible to every read until its tombstone goes, which it does once its events are delivered', async () => {
    const { store, repository, raw } = await setup('tombstones');
    const kept = new Counter('a', 'kept');
    const gone = new Counter('b', 'gone');
    await repository.insert(kept);
    await repository.insert(gone);
    await repository.remove(gone);
    expect(await repository.findById('b')).toBeNull();
    expect(await repository.currentVersion('b')).toBe(-1);
    expect(await repository.existsById('b')).toBe(false);
    const listed: string[] = [];
    for await (const counter of (repository as unknown as { aggregates(): AsyncIterable<Counter> }).aggregates())
      listed.push(counter.id);
    expect(listed).toEqual(['a']);
    expect((await raw()).map((d) => d._id)).toEqual(['a', 'b']);
    // The store delivers: the tombstone is deleted with its last event.
    const now = Date.now();
    for (const claim of await store.claim({ owner: 'r', limit: 10, leaseMs: 1000, now })) {
      expect(
        await store.ack(
          'r',
          claim.events.map((e) => e.eventId),
        ),
      ).toBe(claim.events.length);
    }
    expect((await raw()).map((d) => d._id)).toEqual(['a']);
    expect(await store.status(now)).toEqual({
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
  });

  it("an id can be inserted again while its removal is still pending: the old life's events are delivered first", async () => {
    const { store, repository } = await setup('reinsert');
    const first = new Counter('x', 'first');
    await repository.insert(first);
    first.increment();
    await repository.update(first);
    await repository.remove(first); // PURGE v3, pending
    const second = new Counter('x', 'second');
    await repository.insert(second); // v1 again
    expect((await repository.findById('x'))!.label).toBe('second');
    await expect(repository.insert(new Counter('x', 'third'))).rejects.toThrow(/already exists|duplicate/i);
    const [claim] = await store.claim({ owner: 'r', limit: 10, leaseMs: 1000, now: Date.now() });
    expect(
      claim.events.map((e) => [e.version, e.event.type, (e.event as { snapshot?: { label: string } }).snapshot?.label]),
    ).toEqual([
      [1, 'UPSERT', 'first'],
      [2, 'UPSERT', 'first'],
      [3, 'PURGE', undefined],
      [1, 'UPSERT', 'second'],
    ]);
  });

  it('the store claims from the collection of every repository it is given to, without being told, in a process that only relays', async () => {
    const { repository } = await setup('registered');
    await repository.insert(new Counter('r', 'registered'));
    // Another process: the same repository class, given a store of its own, writing nothing.
    const relayOnly = new MongoOutboxStore();
    new CounterMongooseRepository({
      connection: observed,
      collection: 'registered',
      aggregate: Counter,
      outbox: relayOnly,
    });
    expect(relayOnly.namespaces).toEqual([]);
    const [claim] = await relayOnly.claim({ owner: 'r', limit: 10, leaseMs: 1000, now: Date.now() });
    expect(claim).toMatchObject({ aggregateId: 'r' });
    expect(relayOnly.namespaces).toEqual([`${observed.db!.databaseName}.registered`]);
  });

  it("refuses, writing nothing: an event without a usable id, a toDocument that sets an outbox field, another backend's outbox", async () => {
    const { store, repository, raw } = await setup('refusals');
    class NoIdCounter extends Counter {
      override triggerDataSyncHook(): void {
        this.collectDataSyncEvent({
          type: 'UPSERT',
          eventId: 'a.b',
          aggregate: 'Counter',
          id: this.id,
          version: this.newVersion,
          snapshot: {},
        } as never);
      }
    }
    await expect(repository.insert(new NoIdCounter('n', 'no id'))).rejects.toThrow(/no usable eventId/);
    class SneakyRepository extends CounterMongooseRepository {
      protected override toDocument(counter: Counter) {
        return { ...super.toDocument(counter), _outbox: {} } as never;
      }
    }
    const sneaky = new SneakyRepository({
      connection: observed,
      collection: 'refusals',
      aggregate: Counter,
      outbox: store,
    });
    await expect(sneaky.insert(new Counter('s', 'sneaky'))).rejects.toThrow(/must not set _outbox/);
    expect(await raw()).toEqual([]);
    const { InMemoryOutboxStore } = await import('@ddd-kit/repository/outbox');
    expect(
      () =>
        new CounterMongooseRepository({
          connection: observed,
          collection: 'refusals',
          aggregate: Counter,
          outbox: new InMemoryOutboxStore(),
        }),
    ).toThrow(/cannot store data-sync events/);
    await expect(store.ack('r', ['a.b'])).rejects.toThrow(/not an event id/);
    await expect(store.ack('r', ['$where'])).rejects.toThrow(/not an event id/);
  });

  it('writes racing with claims, acks and failures lose no event and never hand one to two relays', async () => {
    const { store, repository } = await setup('races');
    const ids = Array.from({ length: 8 }, (_, i) => `r${i}`);
    const counters = ids.map((id) => new Counter(id, id));
    for (const c of counters) await repository.insert(c);
    const delivered = new Map<string, number>();
    let writing = true;
    const writer = (async () => {
      for (let round = 0; round < 10; round++) {
        for (const c of counters) {
          c.increment();
          await repository.update(c);
        }
      }
      writing = false;
    })();
    const relay = async (owner: string) => {
      let idle = 0;
      while (writing || idle < 2) {
        const claims = await store.claim({ owner, limit: 3, leaseMs: 60_000, now: Date.now() });
        idle = claims.length === 0 ? idle + 1 : 0;
        for (const claim of claims) {
          const [head, ...rest] = claim.events;
          // Every third claim fails its head once: the instance is retried by whoever claims next.
          if (head.attempts === 0 && head.version % 3 === 0) {
            await store.fail(owner, head.eventId, {
              error: 'flaky',
              retryAt: Date.now(),
              maxAttempts: 5,
              now: Date.now(),
            });
            continue;
          }
          for (const e of [head, ...rest]) delivered.set(e.eventId, (delivered.get(e.eventId) ?? 0) + 1);
          expect(
            await store.ack(
              owner,
              claim.events.map((e) => e.eventId),
            ),
          ).toBe(claim.events.length);
        }
        await new Promise((r) => setImmediate(r));
      }
    };
    await Promise.all([writer, relay('one'), relay('two'), relay('three')]);
    expect(await store.status(Date.now())).toEqual({
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
    expect(delivered.size).toBe(ids.length * 11);
    expect([...delivered.values()].every((n) => n === 1)).toBe(true);
  });

  it('claims racing from separate clients: each round, exactly one relay gets the instance', async () => {
    // Separate MongoClients, so the claims really run side by side on the server.
    const clients = await Promise.all(
      Array.from({ length: 6 }, () =>
        mongoose.createConnection(mongoUri(), { dbName: observed.db!.databaseName }).asPromise(),
      ),
    );
    try {
      const { repository } = await setup('claim_race');
      const stores = clients.map((c) => new MongoOutboxStore({ collections: [c.db!.collection('claim_race')] }));
      const counter = new Counter('contested', 'contested');
      await repository.insert(counter);
      let now = Date.now();
      for (let round = 0; round < 40; round++) {
        now += 10_000; // every earlier lease has expired
        const results = await Promise.all(
          stores.flatMap((store, i) =>
            [0, 1].map((j) => store.claim({ owner: `relay-${i}-${j}`, limit: 1, leaseMs: 5_000, now })),
          ),
        );
        expect({ round, winners: results.filter((claims) => claims.length === 1).length }).toEqual({
          round,
          winners: 1,
        });
      }
    } finally {
      for (const c of clients) await c.close();
    }
  });
});
