// The transactional outbox (@ddd-kit/repository): what storing a write's data-sync events with
// the write costs, and how fast the relay hands them on. Every PostgreSQL row runs on a private
// cluster this bench starts (bench/postgres.js: wal_level=logical, fsync on), in both commit
// modes (synchronous_commit off, and on as by default), and so do the rows against
// pg-transactional-outbox (bench/outbox-peer.js), which need logical replication.
//
// Write cost, each side in the same run, alternating slices:
// - PostgreSQL: PostgresRepository.update with a PostgresOutboxStore (the UPDATE and the
//   outbox INSERT in one statement, relays woken by a NOTIFY of its own after the commit) beside PostgresRepository.update alone,
//   and, as the floor the driver sets, pg running that same combined statement beside the
//   plain conditional UPDATE.
// - MongoDB-wire emulator: MongooseRepository.update with a MongoOutboxStore (the events ride in
//   the same conditional updateOne) beside MongooseRepository.update alone.
// Between slices the outbox is emptied (untimed) as a relay would keep it, and every event the
// outbox side wrote is counted there: one per update, or the run fails.
//
// Relay (see relayRows): throughput draining a backlog, and delivery lag from commit to the
// handler under a steady write load.
//
// The outbox without a table: bench/outbox-wal.js.
//
// OUTBOX_BENCH_ONLY=postgres|peer|mongo|relay|wal runs one group (while developing).
import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import { DataSyncEvent, DataSyncEventBus } from '@ddd-kit/repository';
import { MongoOutboxStore, OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { peerRows } from './outbox-peer.js';
import { walRows } from './outbox-wal.js';
import {
  Counter,
  CounterDocuments,
  CounterRows,
  drain,
  loadAggregates,
  pacedWrites,
  PER_WRITER,
  rotatingUpdates,
  WRITERS,
} from './outbox-support.js';
import { waitFor } from '../test/support/wait.js';
import { COMMIT_MODES, privateLogicalCluster, serverFacts, benchPool, dropBenchTables } from './postgres.js';
import {
  alternate,
  cpuNote,
  measureBatches,
  median,
  notes,
  pairsOf,
  percentile,
  perWriterOpsPerSecond,
  ratioSummary,
  sliceMs,
  walNote,
  withWal,
} from './util.js';

/** The issue's target for the update with its event (default settings, durable commits) against the update alone, 16 writers. */
const WITH_EVENT_TARGET = 0.7;

export default async function outboxBench({ log }) {
  const only = process.env.OUTBOX_BENCH_ONLY;
  const rows = [];
  const cluster = !only || only !== 'mongo' ? await privateLogicalCluster() : undefined;
  log(cluster ? `PostgreSQL rows on a ${cluster.source}` : 'no PostgreSQL rows');
  try {
    const url = cluster?.url;
    if (!only || only === 'postgres')
      for (const mode of COMMIT_MODES) rows.push(...(await postgresWriteRows({ log, url, mode })));
    if (!only || only === 'peer') rows.push(...(await peerRows({ log, url })));
    if (!only || only === 'mongo') rows.push(...(await mongoWriteRows({ log })));
    if (!only || only === 'relay') rows.push(...(await relayRows({ log, url })));
    if (!only || only === 'wal') rows.push(...(await walRows({ log, url })));
  } finally {
    await cluster?.stop();
  }
  return rows;
}

// ---------------------------------------------------------------- PostgreSQL write cost

// Short slices, many pairs, as in bench/repository.bench.js: a burst that disturbs the shared
// machine spoils a few pair ratios that the median leaves out.
const PG_SLICE_MS = sliceMs(100);
const PG_PAIRS = pairsOf(40);
const WARM_MS = sliceMs(3000);

async function postgresWriteRows({ log, url, mode }) {
  const pool = benchPool({ connectionString: url, max: WRITERS, options: mode.options });
  const tables = [
    'outbox_bench_counters',
    'outbox_bench_plain',
    'outbox_bench_quiet',
    'outbox_bench_raw',
    'outbox_bench_events',
  ];
  try {
    const store = new PostgresOutboxStore({ pool, table: 'outbox_bench_events' });
    const bus = new DataSyncEventBus();
    const withOutbox = new CounterRows({ pool, aggregate: Counter, publisher: bus, outbox: store });
    const alone = new CounterRows({ pool, aggregate: Counter, publisher: bus, table: 'outbox_bench_plain' });
    // The same outbox without NOTIFY (relays then poll): what the wake-up after the commit adds.
    const quietStore = new PostgresOutboxStore({ pool, table: 'outbox_bench_events', notifyChannel: false });
    const quiet = new CounterRows({
      pool,
      aggregate: Counter,
      publisher: bus,
      outbox: quietStore,
      table: 'outbox_bench_quiet',
    });
    await withOutbox.ensureTable();
    await alone.ensureTable();
    await quiet.ensureTable();
    await store.ensureTable();
    const subject = rotatingUpdates(withOutbox, await loadAggregates(withOutbox, 'o'));
    const baseline = rotatingUpdates(alone, await loadAggregates(alone, 'p'));
    const quietSubject = rotatingUpdates(quiet, await loadAggregates(quiet, 'q'));
    // The inserts stored an event each: out of the count below, which is of updates.
    const inserted = await drain(store);
    if (inserted !== 2 * WRITERS * PER_WRITER)
      throw new Error(`the outbox held ${inserted} events for ${2 * WRITERS * PER_WRITER} inserts`);
    let stored = 0;
    const emptyOutbox = async () => {
      stored += await drain(store);
    };

    // The driver's floor: the combined statement PostgresOutboxStore builds, run by pg, beside
    // the bare conditional UPDATE; same table shape, one row each side.
    await pool.query(withOutbox.createTableStatement().replace('"outbox_bench_counters"', '"outbox_bench_raw"'));
    await pool.query(
      `INSERT INTO "outbox_bench_raw" ("id", "version", "label", "count") VALUES ('a', 1, 'a', 0), ('b', 1, 'b', 0)`,
    );
    const raw = { a: 1, b: 1 };
    const rawUpdate = (id) => ({
      text: 'UPDATE "outbox_bench_raw" SET "label" = $3, "count" = $4, "version" = $5 WHERE "id" = $1 AND "version" = $2',
      values: [id, raw[id], id, raw[id], raw[id] + 1],
    });
    let rawStored = 0;
    const rawWithEvent = async () => {
      const event = DataSyncEvent.upsert('counter', 'a', raw.a + 1, { label: 'a', count: raw.a });
      const result = await pool.query(store.withEvents(rawUpdate('a'), [event]));
      if (result.rowCount !== 1) throw new Error(`raw UPDATE + outbox INSERT inserted ${result.rowCount} rows`);
      raw.a++;
      rawStored++;
    };
    // Prepared, as withEvents' statement is: the two differ by the INSERT alone.
    const rawAlone = async () => {
      const result = await pool.query({ name: 'outbox_bench_raw_update', ...rawUpdate('b') });
      if (result.rowCount !== 1) throw new Error('raw conditional UPDATE matched nothing');
      raw.b++;
    };

    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) {
      await subject.update(0);
      await baseline.update(0);
      await rawWithEvent();
      await rawAlone();
    }
    await emptyOutbox();

    const one = (op) => withWal(pool, () => measureBatches(async () => (await op(0), 1), { ms: PG_SLICE_MS }));
    const writers = (op) => withWal(pool, () => perWriterOpsPerSecond(op, { writers: WRITERS, ms: PG_SLICE_MS }));
    const sequential = await alternate(one(subject.update), one(baseline.update), {
      pairs: PG_PAIRS,
      before: emptyOutbox,
    });
    log(
      `postgres ${mode.label}, sequential: update + outbox ${Math.round(sequential.ops)} ops/s, update alone ${Math.round(sequential.baselineOps)} ops/s`,
    );
    const concurrent = await alternate(writers(subject.update), writers(baseline.update), {
      pairs: PG_PAIRS,
      before: emptyOutbox,
    });
    log(
      `postgres ${mode.label}, ${WRITERS} writers: update + outbox ${Math.round(concurrent.ops)} ops/s, update alone ${Math.round(concurrent.baselineOps)} ops/s`,
    );
    const concurrentQuiet = await alternate(writers(quietSubject.update), writers(baseline.update), {
      pairs: PG_PAIRS,
      before: emptyOutbox,
    });
    log(
      `postgres ${mode.label}, ${WRITERS} writers, no NOTIFY: update + outbox ${Math.round(concurrentQuiet.ops)} ops/s, update alone ${Math.round(concurrentQuiet.baselineOps)} ops/s`,
    );
    const driver = await alternate(one(rawWithEvent), one(rawAlone), { pairs: PG_PAIRS, before: emptyOutbox });
    log(
      `postgres ${mode.label}, driver: UPDATE + outbox INSERT ${Math.round(driver.ops)} ops/s, UPDATE alone ${Math.round(driver.baselineOps)} ops/s`,
    );
    await emptyOutbox();

    // Every update of the outbox side stored exactly one event, and the rows really moved: each
    // table's counts add up to its side's updates.
    const updates = subject.done() + quietSubject.done() + rawStored;
    if (stored !== updates) throw new Error(`the outbox held ${stored} events for ${updates} updates`);
    for (const [table, side] of [
      ['outbox_bench_counters', subject],
      ['outbox_bench_plain', baseline],
      ['outbox_bench_quiet', quietSubject],
    ]) {
      const { rows } = await pool.query(`SELECT COALESCE(sum("count"), 0)::int AS n FROM "${table}"`);
      if (rows[0].n !== side.done())
        throw new Error(`${table}: counts add up to ${rows[0].n} for ${side.done()} updates`);
    }

    const server = `${await serverFacts(pool)}, ${mode.label} on every side`;
    const checked = `every update checked (version advanced); the ${stored} events of the outbox sides' updates all found in the outbox (one per update)`;
    const suffix = `, ${mode.label}`;
    return [
      {
        case: `PostgreSQL update with its outbox row${suffix}`,
        subject: 'PostgresRepository.update, outbox on',
        baseline: 'PostgresRepository.update, outbox off',
        ...sequential,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs, after ${WARM_MS / 1000} s of warm-up; one writer over ${PER_WRITER} aggregates, autocommit, NOTIFY after each commit (coalesced); outbox emptied between slices; ${server}`,
        note: notes(checked, cpuNote(sequential), walNote(sequential)),
      },
      {
        case: `PostgreSQL update with its outbox row, ${WRITERS} writers${suffix}`,
        subject: 'PostgresRepository.update, outbox on',
        baseline: 'PostgresRepository.update, outbox off',
        ...concurrent,
        target: mode.name === 'on' ? WITH_EVENT_TARGET : undefined,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; ${WRITERS} writers × ${PER_WRITER} aggregates of their own, a pool of ${WRITERS}, NOTIFY after the commits (coalesced); ${server}`,
        note: notes(checked, cpuNote(concurrent), walNote(concurrent)),
      },
      {
        case: `PostgreSQL update with its outbox row, ${WRITERS} writers, no NOTIFY${suffix}`,
        subject: 'PostgresRepository.update, outbox on (notifyChannel: false)',
        baseline: 'PostgresRepository.update, outbox off',
        ...concurrentQuiet,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; ${WRITERS} writers × ${PER_WRITER} aggregates of their own, a pool of ${WRITERS}; no NOTIFY: relays in other processes would poll; ${server}`,
        note: notes(checked, cpuNote(concurrentQuiet), walNote(concurrentQuiet)),
      },
      {
        case: `PostgreSQL UPDATE with an outbox INSERT, driver only (the floor of the rows above)${suffix}`,
        subject: 'pg: WITH w AS (UPDATE … RETURNING 1) INSERT INTO outbox …, prepared',
        baseline: 'pg: the same UPDATE alone, prepared',
        ...driver,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; one writer, one row; ${server}`,
        note: notes(
          'the statement PostgresOutboxStore.withEvents builds, named as the store names it; every statement checked (row count)',
          cpuNote(driver),
          walNote(driver),
        ),
      },
    ];
  } finally {
    await dropBenchTables(pool, tables).catch(() => undefined);
    await pool.end();
  }
}

// ---------------------------------------------------------------- MongoDB-wire write cost

const MONGO_SLICE_MS = sliceMs(1000);
const MONGO_PAIRS = pairsOf(6);

async function mongoWriteRows({ log }) {
  const uri = process.env.MONGODB_URI;
  if (!uri) throw new Error('MONGODB_URI is not set (bench/run.js provides it)');
  const connection = await mongoose
    .createConnection(uri, { dbName: `bench_outbox_${randomUUID().slice(0, 8)}` })
    .asPromise();
  const label = (process.env.DDD_KIT_MONGODB_URI_SOURCE ?? '').includes('jongodb')
    ? 'MongoDB-wire emulator (jongodb)'
    : 'MongoDB';
  try {
    const store = new MongoOutboxStore();
    const bus = new DataSyncEventBus();
    const withOutbox = new CounterDocuments({
      connection,
      collection: 'outbox_counters',
      aggregate: Counter,
      publisher: bus,
      outbox: store,
    });
    const alone = new CounterDocuments({
      connection,
      collection: 'plain_counters',
      aggregate: Counter,
      publisher: bus,
    });
    const subject = rotatingUpdates(withOutbox, await loadAggregates(withOutbox, 'o'));
    const baseline = rotatingUpdates(alone, await loadAggregates(alone, 'p'));
    await store.ensureIndexes();
    // The inserts stored an event each: out of the count below, which is of updates.
    const inserted = await drain(store);
    if (inserted !== WRITERS * PER_WRITER)
      throw new Error(`the outbox held ${inserted} events for ${WRITERS * PER_WRITER} inserts`);
    let stored = 0;
    const emptyOutbox = async () => {
      stored += await drain(store);
    };

    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) {
      await subject.update(0);
      await baseline.update(0);
    }
    await emptyOutbox();

    const one = (op) => () => measureBatches(async () => (await op(0), 1), { ms: MONGO_SLICE_MS });
    const sequential = await alternate(one(subject.update), one(baseline.update), {
      pairs: MONGO_PAIRS,
      before: emptyOutbox,
    });
    log(
      `${label} sequential: update + events ${Math.round(sequential.ops)} ops/s, update alone ${Math.round(sequential.baselineOps)} ops/s`,
    );
    const concurrent = await alternate(
      () => perWriterOpsPerSecond(subject.update, { writers: WRITERS, ms: MONGO_SLICE_MS }),
      () => perWriterOpsPerSecond(baseline.update, { writers: WRITERS, ms: MONGO_SLICE_MS }),
      { pairs: MONGO_PAIRS, before: emptyOutbox },
    );
    log(
      `${label} ${WRITERS} writers: update + events ${Math.round(concurrent.ops)} ops/s, update alone ${Math.round(concurrent.baselineOps)} ops/s`,
    );
    await emptyOutbox();
    if (stored !== subject.done())
      throw new Error(`the documents carried ${stored} events for ${subject.done()} updates`);

    const checked = `every update checked (version advanced); the ${stored} events of the outbox side's updates all found in the documents (one per update)`;
    return [
      {
        case: `${label} update carrying its events`,
        subject: 'MongooseRepository.update, outbox on',
        baseline: 'MongooseRepository.update, outbox off',
        ...sequential,
        settings: `${MONGO_SLICE_MS} ms slices, ${MONGO_PAIRS} alternating pairs, after ${WARM_MS / 1000} s of warm-up; one writer over ${PER_WRITER} aggregates; outbox emptied between slices`,
        note: notes(checked, cpuNote(sequential)),
      },
      {
        case: `${label} update carrying its events, ${WRITERS} writers`,
        subject: 'MongooseRepository.update, outbox on',
        baseline: 'MongooseRepository.update, outbox off',
        ...concurrent,
        settings: `${MONGO_SLICE_MS} ms slices, ${MONGO_PAIRS} alternating pairs; ${WRITERS} writers × ${PER_WRITER} aggregates of their own; outbox emptied between slices`,
        note: notes(checked, cpuNote(concurrent)),
      },
    ];
  } finally {
    // The emulator has no drop commands: empty the collections instead.
    await connection.db
      .collection('outbox_counters')
      .deleteMany({})
      .catch(() => undefined);
    await connection.db
      .collection('plain_counters')
      .deleteMany({})
      .catch(() => undefined);
    await connection.close();
  }
}

// ---------------------------------------------------------------- relay

const RELAY_PAIRS = pairsOf(3);
const BACKLOG_WRITE_MS = sliceMs(1500);
const STEADY_MS = sliceMs(8000);

/**
 * A handler that checks what it receives: for each aggregate, versions one after another from
 * where the aggregate stood (a repeat is counted as a duplicate; a gap or a step back throws),
 * and the time each write's events arrived.
 */
function checkingHandler(aggregates) {
  const next = new Map(aggregates.map((a) => [a.id, a.oldVersion + 1]));
  const arrived = new Map();
  let delivered = 0;
  let duplicates = 0;
  let failure;
  /** `reached(n)` callers: resolved once n events arrived, or on a repeat or a wrong order (check() says which). */
  let waiting = [];
  const wake = () => {
    const over = duplicates > 0 || failure !== undefined;
    const still = [];
    for (const waiter of waiting) {
      if (over || delivered >= waiter.n) waiter.resolve();
      else still.push(waiter);
    }
    waiting = still;
  };
  const deliver = async (_aggregate, events) => {
    const now = performance.now();
    try {
      for (const event of events) {
        const expected = next.get(event.id);
        if (event.version === expected - 1) {
          duplicates++;
          continue;
        }
        if (event.version !== expected) {
          failure ??= new Error(`relay delivered ${event.id} v${event.version} where v${expected} was next`);
          throw failure;
        }
        next.set(event.id, expected + 1);
        arrived.set(`${event.id}:${event.version}`, now);
        delivered++;
      }
    } finally {
      wake();
    }
  };
  return {
    deliver,
    reached: (n) =>
      new Promise((resolve) => {
        waiting.push({ n, resolve });
        wake();
      }),
    delivered: () => delivered,
    duplicates: () => duplicates,
    arrivedAt: (id, version) => arrived.get(`${id}:${version}`),
    check: () => {
      if (failure) throw failure;
    },
  };
}

/**
 * Relay throughput and delivery lag on one backend:
 * - throughput: a backlog written by WRITERS writers (relay stopped), then drained by one relay;
 *   events/s drained beside the events/s the writers produced it at (pairs: write, then drain).
 * - lag: a steady write load at half the drain rate measured (paced writers), the relay running;
 *   lag = when the handler got the event − when the write's call resolved (its commit known).
 */
async function relayRowsOn({ label, suffix = '', repository, store, aggregates, relaySettings, wakeNote, log }) {
  const writes = rotatingUpdates(repository, aggregates);
  await drain(store);

  const drainRates = [];
  const writeRates = [];
  for (let pair = 0; pair < RELAY_PAIRS; pair++) {
    const handler = checkingHandler(aggregates);
    const before = writes.done();
    const written = await perWriterOpsPerSecond(writes.update, { writers: WRITERS, ms: BACKLOG_WRITE_MS });
    const backlog = writes.done() - before;
    const relay = new OutboxRelay({
      stores: [store],
      deliver: handler.deliver,
      owner: `bench-relay-${pair}`,
      ...relaySettings,
    });
    const start = performance.now();
    await relay.start();
    // Timed to the delivery that completes the backlog (a signal from the handler, not a poll).
    await waitFor(`${label}: draining ${backlog} events`, handler.reached(backlog), { timeoutMs: 120_000 });
    const seconds = (performance.now() - start) / 1000;
    await relay.stop();
    handler.check();
    if (handler.delivered() !== backlog || handler.duplicates() !== 0)
      throw new Error(`${label}: ${handler.delivered()} delivered (${handler.duplicates()} repeats) of ${backlog}`);
    const status = await store.status(Date.now());
    if (status.pending !== 0 || status.deadLetters !== 0)
      throw new Error(`${label}: ${status.pending} pending, ${status.deadLetters} dead after draining`);
    drainRates.push(backlog / seconds);
    writeRates.push(written.opsPerSec);
    log(
      `${label}${suffix} relay: drained ${backlog} events at ${Math.round(backlog / seconds)} events/s; written at ${Math.round(written.opsPerSec)} writes/s`,
    );
  }
  const ratios = drainRates.map((rate, i) => rate / writeRates[i]);
  const throughput = {
    ops: median(drainRates),
    baselineOps: median(writeRates),
    ...ratioSummary(ratios),
    pairs: RELAY_PAIRS,
  };

  // Steady load: paced writers (one write per writer per period), the relay running all along.
  // Half of what both sides managed above: writers keep their pace, the relay has room.
  const rate = Math.max(10, Math.floor(Math.min(throughput.ops, throughput.baselineOps) / 2));
  const handler = checkingHandler(aggregates);
  const relay = new OutboxRelay({
    stores: [store],
    deliver: handler.deliver,
    owner: 'bench-relay-steady',
    ...relaySettings,
  });
  await relay.start();
  const {
    committed,
    late,
    begin,
    seconds: wroteFor,
  } = await pacedWrites({
    writers: WRITERS,
    rate,
    ms: STEADY_MS,
    write: writes.update,
  });
  await waitFor(`${label}: delivering the steady load`, handler.reached(committed.length), { timeoutMs: 120_000 });
  await relay.stop();
  handler.check();
  if (handler.delivered() !== committed.length || handler.duplicates() !== 0)
    throw new Error(
      `${label}: ${handler.delivered()} delivered (${handler.duplicates()} repeats) of ${committed.length}`,
    );
  let early = 0;
  const lags = committed
    .map(([[id, version], at]) => {
      const lag = handler.arrivedAt(id, version) - at;
      if (lag < 0) early++;
      return Math.max(0, lag);
    })
    .sort((a, b) => a - b);
  const [p50, p99, max] = [percentile(lags, 50), percentile(lags, 99), lags[lags.length - 1]];
  const lastArrival = Math.max(...committed.map(([[id, version]]) => handler.arrivedAt(id, version)));
  const deliveredPerSec = committed.length / ((lastArrival - begin) / 1000);
  log(
    `${label}${suffix} steady ${rate} writes/s: lag p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`,
  );

  const settings = `one relay (${
    Object.entries(relaySettings)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'default settings'
  }); ${wakeNote}; handler: an order check per aggregate, no I/O`;
  return [
    {
      case: `${label} relay throughput (a backlog drained)${suffix}`,
      subject: 'OutboxRelay: events/s delivered',
      baseline: `update with the outbox on, ${WRITERS} writers: events/s written`,
      ...throughput,
      settings: `${RELAY_PAIRS} pairs: ${BACKLOG_WRITE_MS} ms of writes (relay stopped), then the relay drains them; ${WRITERS} writers × ${PER_WRITER} aggregates; ${settings}`,
      note: 'ratio > 1: one relay drains faster than 16 writers fill; every event checked: in version order per aggregate, none missing, none repeated; outbox empty after each drain',
    },
    {
      case: `${label} relay delivery lag under a steady write load${suffix}`,
      subject: 'OutboxRelay: events/s delivered',
      baseline: 'paced writes/s',
      ops: deliveredPerSec,
      baselineOps: committed.length / wroteFor,
      settings: `${STEADY_MS / 1000} s at ${rate} writes/s (half the lower of the two rates above), ${WRITERS} paced writers (${late} writes started late); ${settings}`,
      note: notes(
        `lag from the write's commit (its call resolved) to the handler: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms over ${lags.length} events`,
        early > 0 ? `${early} handled before the writer saw its commit (counted as 0 ms)` : undefined,
        'every event checked as above',
      ),
    },
  ];
}

async function relayRows({ log, url }) {
  const rows = [];
  // PostgreSQL: woken after each commit (in process, and LISTEN/NOTIFY), polling every second as the fallback.
  for (const mode of COMMIT_MODES) {
    const pool = benchPool({ connectionString: url, max: WRITERS + 4, options: mode.options });
    try {
      const store = new PostgresOutboxStore({ pool, table: 'outbox_bench_relay_events' });
      const repository = new CounterRows({
        pool,
        aggregate: Counter,
        publisher: new DataSyncEventBus(),
        outbox: store,
        table: 'outbox_bench_relay',
      });
      await repository.ensureTable();
      const aggregates = await loadAggregates(repository, 'r');
      rows.push(
        ...(await relayRowsOn({
          label: 'PostgreSQL',
          suffix: `, ${mode.label}`,
          repository,
          store,
          aggregates,
          relaySettings: {},
          wakeNote: `woken after the commit (in process; LISTEN/NOTIFY for other processes), polling every 1 s besides; ${await serverFacts(pool)}, ${mode.label}`,
          log,
        })),
      );
    } finally {
      await dropBenchTables(pool, ['outbox_bench_relay', 'outbox_bench_relay_events']).catch(() => undefined);
      await pool.end();
    }
  }

  // MongoDB-wire: no change stream on the emulator, so the relay polls.
  const uri = process.env.MONGODB_URI;
  if (!uri) throw new Error('MONGODB_URI is not set (bench/run.js provides it)');
  const connection = await mongoose
    .createConnection(uri, { dbName: `bench_relay_${randomUUID().slice(0, 8)}` })
    .asPromise();
  const label = (process.env.DDD_KIT_MONGODB_URI_SOURCE ?? '').includes('jongodb')
    ? 'MongoDB-wire emulator (jongodb)'
    : 'MongoDB';
  try {
    const store = new MongoOutboxStore();
    const repository = new CounterDocuments({
      connection,
      collection: 'relay_counters',
      aggregate: Counter,
      publisher: new DataSyncEventBus(),
      outbox: store,
    });
    const aggregates = await loadAggregates(repository, 'r');
    await store.ensureIndexes();
    rows.push(
      ...(await relayRowsOn({
        label,
        repository,
        store,
        aggregates,
        relaySettings: { pollIntervalMs: 50 },
        wakeNote: 'polling (no notification from this store)',
        log,
      })),
    );
  } finally {
    await connection.db
      .collection('relay_counters')
      .deleteMany({})
      .catch(() => undefined);
    await connection.close();
  }
  return rows;
}
