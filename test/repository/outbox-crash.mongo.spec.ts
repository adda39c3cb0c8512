// The outbox on MongoDB(-wire): an application process SIGKILLed after its write committed and
// before any handler ran loses no event. Worker processes (test/repository/workers) import the
// built library; this test reads the documents, the read model and the delivery log directly.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { MongoOutboxStore } from '@ddd-kit/repository/outbox';
import { assertBuilt } from '../support/built.js';
import { mongoLabel, uniqueName, mongoUri } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import {
  killHard,
  killRunningWorkers,
  startOutboxWorker,
  stopGracefully,
  tallyDeliveries,
  type Delivery,
  type OutboxWorkerArgs,
} from './support/outbox-crash.support.js';

/** The relays' lease: far longer than any case and its waits (a successor's clock is moved past it instead). */
const LEASE_MS = 600_000;
/** How long a worker may take to start and report (a process, mongoose, the library): generous, CI machines are shared. */
const START_MS = 120_000;

let connection: Connection;
let dbName: string;
beforeAll(async () => {
  assertBuilt('libs/repository');
  dbName = uniqueName('outbox_crash');
  connection = await mongoose.createConnection(mongoUri(), { dbName }).asPromise();
});
afterAll(async () => {
  await killRunningWorkers();
  await connection?.close();
});

function fixture(name: string, ids: string[], leaseMs = LEASE_MS) {
  const db = connection.db!;
  const args: OutboxWorkerArgs = { backend: 'mongo', dbName, collection: name, ids, leaseMs };
  const store = new MongoOutboxStore({ collections: [db.collection(name)] });
  return {
    args,
    store,
    /** The write model: id → stored version (tombstones are not stored aggregates). */
    stored: async () => {
      const documents = await db
        .collection(name)
        .find({ _deleted: { $ne: true } })
        .toArray();
      return new Map(documents.map((d) => [String(d._id), d.version as number]));
    },
    storedCounts: async () =>
      new Map(
        (
          await db
            .collection(name)
            .find({ _deleted: { $ne: true } })
            .toArray()
        ).map((d) => [String(d._id), d.count as number]),
      ),
    readModel: async () =>
      new Map(
        (await db.collection(`${name}_read`).find({}).toArray()).map((d) => [
          String(d._id),
          { version: d.version as number, count: d.count as number },
        ]),
      ),
    deliveries: async () => (await db.collection(`${name}_deliveries`).find({}).toArray()) as unknown as Delivery[],
    deliveryCount: () => db.collection(`${name}_deliveries`).countDocuments({}),
    /** Every outbox entry of the collection is leased (a relay claimed them). */
    allClaimed: async () => {
      const documents = await db.collection(name).find({}).toArray();
      const entries = documents.flatMap((d) =>
        Object.values((d._outbox ?? {}) as Record<string, { owner: string | null }>),
      );
      return entries.length > 0 && entries.every((e) => e.owner !== null);
    },
  };
}

/** The read model holds every aggregate at its stored version and count. */
async function expectConverged(f: ReturnType<typeof fixture>): Promise<void> {
  const stored = await f.stored();
  const counts = await f.storedCounts();
  const read = await f.readModel();
  for (const [id, version] of stored) expect({ id, ...read.get(id) }).toEqual({ id, version, count: counts.get(id) });
}

describe(`outbox crash on ${mongoLabel()}`, () => {
  it('killed after the write committed and its relay claimed, before any handler ran: a restart delivers, the read model converges without the reconciler', async () => {
    const f = fixture('crash_once', ['a', 'b', 'c']);
    // First life: the writes, then a relay that claims them and parks before its handler.
    const first = startOutboxWorker('write', { ...f.args, park: true });
    await first.message('written', START_MS);
    await waitFor('the parked relay to claim every event', f.allClaimed);
    expect(await f.deliveries()).toEqual([]);
    await killHard(first);
    expect(await f.readModel()).toEqual(new Map());
    expect((await f.store.status(Date.now())).pending).toBe(3);

    // Second life: a relay (a restarted instance) takes the dead one's claims once their lease ran
    // out: at once on its clock, which runs past it. Before that, nobody can claim them.
    expect(await f.store.claim({ owner: 'too-early', limit: 10, leaseMs: 1_000, now: Date.now() })).toEqual([]);
    const second = startOutboxWorker('relay', { ...f.args, clockAheadMs: 2 * LEASE_MS });
    await second.message('ready', START_MS);
    await waitFor(
      'the restarted relay to deliver every event',
      async () => (await f.store.status(Date.now())).pending === 0,
    );
    await stopGracefully(second);

    await expectConverged(f);
    const tally = tallyDeliveries(await f.stored(), await f.deliveries());
    expect(tally).toEqual({ written: 3, delivered: 3, lost: 0, duplicates: 0, unknown: 0 });
  }, 180_000);

  it('killed after an update committed, with no relay at all: the next instance delivers it', async () => {
    const f = fixture('crash_update', ['u']);
    const writer = startOutboxWorker('write', f.args);
    await writer.message('written', START_MS); // v1
    await killHard(writer);
    const again = startOutboxWorker('write', f.args);
    await again.message('written', START_MS); // v2, and killed before anything was delivered
    await killHard(again);
    expect(await f.deliveries()).toEqual([]);
    const relay = startOutboxWorker('relay', f.args);
    await relay.message('ready', START_MS);
    await waitFor('the relay to deliver both versions', async () => (await f.store.status(Date.now())).pending === 0);
    await stopGracefully(relay);
    await expectConverged(f);
    const deliveries = await f.deliveries();
    expect(deliveries.map((d) => d.version)).toEqual([1, 2]);
  }, 180_000);

  it('under load with repeated kills: every written event is delivered (lost 0), duplicates counted', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `load-${i}`);
    // Instances take over a killed one's claims while the load goes on: real leases, short ones.
    const f = fixture('crash_load', ids, 1_000);
    const workers = [startOutboxWorker('load', f.args), startOutboxWorker('load', f.args)];
    await Promise.all(workers.map((w) => w.message('ready', START_MS)));
    const KILLS = 6;
    for (let kill = 0; kill < KILLS; kill++) {
      // Let it write and relay for a while, then kill one instance mid-flight and start another.
      const before = await f.deliveryCount();
      await waitFor('the instances to deliver', async () => (await f.deliveryCount()) >= before + 15);
      const victim = kill % workers.length;
      await killHard(workers[victim]);
      workers[victim] = startOutboxWorker('load', f.args);
      await workers[victim].message('ready', START_MS);
    }
    // The last writers die too; then one relay alone drains what they left.
    for (const worker of workers) await killHard(worker);
    const drain = startOutboxWorker('relay', { ...f.args, clockAheadMs: 2 * LEASE_MS });
    await drain.message('ready', START_MS);
    await waitFor('the last relay to drain the outbox', async () => (await f.store.status(Date.now())).pending === 0);
    await stopGracefully(drain);

    const tally = tallyDeliveries(await f.stored(), await f.deliveries());
    process.stdout.write(
      `[outbox crash, ${mongoLabel()}] ${KILLS + workers.length} SIGKILLs under load: events written ${tally.written}, ` +
        `delivered ${tally.delivered}, lost ${tally.lost}, duplicates ${tally.duplicates}\n`,
    );
    expect(tally.lost).toBe(0);
    expect(tally.unknown).toBe(0);
    expect(tally.delivered).toBeGreaterThanOrEqual(tally.written);
    expect(tally.written).toBeGreaterThan(ids.length);
    await expectConverged(f);
    expect((await f.store.status(Date.now())).deadLetters).toBe(0);
  }, 400_000);
});
