// The outbox without a table (PostgresWalOutboxStore): a relaying process SIGKILLed while a
// handler runs loses no event — the slot was never confirmed past that handler's event, so the
// next relay reads it again — and every aggregate's events reach the handlers in order. Worker
// processes (test/repository/workers) import the built library; this test reads the slot and the
// delivery log directly.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresWalOutboxStore } from '@ddd-kit/repository/postgres-wal';
import { assertBuilt } from '../support/built.js';
import { provideLogicalPostgres } from '../support/server-provider.js';
import { waitFor } from '../support/wait.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';
import {
  killHard,
  killRunningWorkers,
  startOutboxWorker,
  stopGracefully,
  tallyDeliveries,
  type Delivery,
} from './support/outbox-crash.support.js';

/** How long a worker may take to start and report: generous, CI machines are shared. */
const START_MS = 120_000;

let server: Awaited<ReturnType<typeof provideLogicalPostgres>>;
let url: string;
let pool: pg.Pool;
const schema = `crash_wal_${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  assertBuilt('libs/repository');
  server = await provideLogicalPostgres();
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const withPath = new URL(server.url);
  withPath.searchParams.set('options', `-c search_path=${schema}`);
  url = withPath.toString();
  pool = new pg.Pool({ connectionString: url, max: 8 });
}, 120_000);

afterAll(async () => {
  await killRunningWorkers();
  if (pool !== undefined) {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  }
  await server?.stop();
});

describe('the WAL outbox: a relay killed mid-delivery', () => {
  it('the slot is not confirmed past an unfinished handler; the next relay delivers every committed event, in order per aggregate', async () => {
    const name = `${schema}_once`;
    const store = new PostgresWalOutboxStore({ pool, slot: name, prefix: name, deadLetterTable: `${name}_dead` });
    const repository = new CounterPostgresRepository({ aggregate: Counter, pool, table: name, outbox: store });
    await store.ensureSetup();
    await repository.ensureTable();
    await pool.query(
      `CREATE TABLE IF NOT EXISTS ${name}_deliveries (seq bigserial PRIMARY KEY, event_id text, id text, version int, pid int)`,
    );
    const args = { backend: 'postgres-wal' as const, url, collection: name, ids: [], leaseMs: 600_000 };
    const slotPosition = async () =>
      (
        await pool.query<{ lsn: string }>(
          'SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1',
          [name],
        )
      ).rows[0].lsn;
    const deliveries = async () =>
      (
        await pool.query<Delivery & { pid: number }>(
          `SELECT event_id AS "eventId", id, version, pid FROM ${name}_deliveries ORDER BY seq`,
        )
      ).rows;
    try {
      // First life: a relay whose handler parks on p's event.
      const first = startOutboxWorker('relay', { ...args, parkOn: 'p' });
      await first.message('ready', START_MS);
      const VERSIONS = 5;
      const counters = new Map(['a', 'b', 'c'].map((id) => [id, new Counter(id, id)]));
      await repository.insert(counters.get('a')!);
      await repository.insert(counters.get('b')!);
      await repository.insert(new Counter('p', 'parked'));
      // At or past the end of p's commit (durable): while p's handler runs, the slot stays before it.
      const afterP = (await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
      await repository.insert(counters.get('c')!);
      await Promise.all(
        [...counters.values()].map(async (counter) => {
          for (let v = 2; v <= VERSIONS; v++) {
            counter.increment();
            await repository.update(counter);
          }
        }),
      );
      await first.message('parked', START_MS);
      // Every other aggregate's events were delivered (and acked) meanwhile, in other lanes.
      await waitFor(
        "the other aggregates' events delivered",
        async () => (await deliveries()).filter((d) => d.id !== 'p').length === 3 * VERSIONS,
      );
      const slot = await slotPosition();
      const held = await pool.query<{ held: boolean }>('SELECT $1::pg_lsn < $2::pg_lsn AS held', [slot, afterP]);
      expect({ slot, afterP, held: held.rows[0].held }).toMatchObject({ held: true });
      await killHard(first);

      // Second life: a new relay reads the slot again from where it was confirmed.
      const second = startOutboxWorker('relay', args);
      await second.message('ready', START_MS);
      const stored = new Map([...counters.keys(), 'p'].map((id) => [id, id === 'p' ? 1 : VERSIONS]));
      await waitFor(
        'every committed event delivered',
        async () => tallyDeliveries(stored, await deliveries()).lost === 0,
      );
      await stopGracefully(second);

      const log = await deliveries();
      const tally = tallyDeliveries(stored, log);
      expect(tally).toMatchObject({ written: 3 * VERSIONS + 1, lost: 0, unknown: 0 });
      // In order per aggregate: each process received each aggregate's versions one after the other.
      const seen = new Map<string, number[]>();
      for (const d of log) seen.set(`${d.pid} ${d.id}`, [...(seen.get(`${d.pid} ${d.id}`) ?? []), d.version]);
      for (const [key, versions] of seen) {
        const consecutive = versions.every((v, i) => i === 0 || v === versions[i - 1] + 1);
        expect({ key, versions, consecutive }).toMatchObject({ consecutive: true });
      }
      // p's event, whose handler never finished in the first life, was read again in the second.
      expect(log.filter((d) => d.id === 'p').map((d) => d.pid)).toEqual([second.pid]);
    } finally {
      await killRunningWorkers(); // a worker left reading the slot would keep it from being dropped
      await store.dropSlot();
    }
  }, 300_000);
  it('under load, the process reading the slot killed again and again: every committed event delivered, none ahead of its predecessor', async () => {
    const name = `${schema}_load`;
    const store = new PostgresWalOutboxStore({ pool, slot: name, prefix: name, deadLetterTable: `${name}_dead` });
    const repository = new CounterPostgresRepository({ aggregate: Counter, pool, table: name, outbox: store });
    await store.ensureSetup();
    await repository.ensureTable();
    await pool.query(
      `CREATE TABLE IF NOT EXISTS ${name}_deliveries (seq bigserial PRIMARY KEY, event_id text, id text, version int, pid int)`,
    );
    const ids = Array.from({ length: 8 }, (_, i) => `load-${i}`);
    const args = { backend: 'postgres-wal' as const, url, collection: name, ids, leaseMs: 1_000 };
    const deliveries = async () =>
      (
        await pool.query<Delivery & { pid: number }>(
          `SELECT event_id AS "eventId", id, version, pid FROM ${name}_deliveries ORDER BY seq`,
        )
      ).rows;
    try {
      // Two instances write; one of them reads the slot, the other waits for it.
      const workers = [startOutboxWorker('load', args), startOutboxWorker('load', args)];
      await Promise.all(workers.map((w) => w.message('ready', START_MS)));
      for (let kill = 0; kill < 4; kill++) {
        const before = (await deliveries()).length;
        await waitFor('the instances to deliver', async () => (await deliveries()).length >= before + 15);
        // The reader is whoever delivered last: killed mid-stream, the other takes the slot.
        const reader = (await deliveries()).at(-1)!.pid;
        const victim = workers.findIndex((w) => w.pid === reader);
        await killHard(workers[victim]);
        workers[victim] = startOutboxWorker('load', args);
        await workers[victim].message('ready', START_MS);
      }
      for (const worker of workers) await stopGracefully(worker);
      // What was committed and not yet delivered is delivered by the next reader.
      const stored = new Map(
        (await pool.query<{ id: string; version: number }>(`SELECT id, version FROM ${name}`)).rows.map((r) => [
          r.id,
          Number(r.version),
        ]),
      );
      const last = startOutboxWorker('relay', args);
      await last.message('ready', START_MS);
      await waitFor(
        'every committed event delivered',
        async () => tallyDeliveries(stored, await deliveries()).lost === 0,
      );
      await stopGracefully(last);
      const log = await deliveries();
      expect(tallyDeliveries(stored, log)).toMatchObject({ lost: 0, unknown: 0 });
      // In order: within a process, an aggregate's next delivery is never ahead of the one after its last.
      const lastSeen = new Map<string, number>();
      for (const d of log) {
        const key = `${d.pid} ${d.id}`;
        const previous = lastSeen.get(key);
        if (previous !== undefined)
          expect({ key, previous, version: d.version, ahead: d.version > previous + 1 }).toMatchObject({
            ahead: false,
          });
        lastSeen.set(key, d.version);
      }
    } finally {
      await killRunningWorkers();
      await store.dropSlot();
    }
  }, 300_000);
});
