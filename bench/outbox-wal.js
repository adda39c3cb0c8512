// The outbox without a table (PostgresWalOutboxStore, bench/outbox.bench.js's `wal` group), on
// the bench's private cluster (wal_level=logical, fsync on), durable commits (synchronous_commit on):
// - write cost: PostgresRepository.update emitting its event as a logical decoding message,
//   beside the same update alone (1 and WRITERS writers) and beside the table outbox
//   (PostgresOutboxStore, WRITERS writers), alternating slices; both outboxes emptied between
//   slices, untimed, as their relays would keep them. Then against the write alone again with
//   a relay in another process reading the slot during the slices (the server decodes for it).
// - lag: commit → handler and write → handler at LAG_RATE writes/s with the only relay in
//   another process, reading the slot.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DataSyncEventBus } from '@ddd-kit/repository';
import { PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { PostgresWalOutboxStore } from '@ddd-kit/repository/postgres-wal';
import { waitFor } from '../test/support/wait.js';
import {
  Counter,
  CounterRows,
  drain,
  loadAggregates,
  pacedWrites,
  PER_WRITER,
  rotatingUpdates,
  WRITERS,
} from './outbox-support.js';
import { benchPool, COMMIT_MODES, dropBenchTables, serverFacts } from './postgres.js';
import {
  alternate,
  cpuNote,
  measureBatches,
  notes,
  pairsOf,
  percentile,
  perWriterOpsPerSecond,
  sliceMs,
  walNote,
  withWal,
} from './util.js';

/** The targets: the WAL outbox at 0.9× the write alone (16 writers, durable), relay p99 lag at most 5 ms at 200 writes/s. */
const WITH_EVENT_TARGET = 0.9;
const LAG_RATE = 200;
const LAG_MS = sliceMs(6000);
const SLICE_MS = sliceMs(100);
const PAIRS = pairsOf(40);
const WARM_MS = sliceMs(3000);
const SLOT = 'outbox_wal_bench';

const durable = COMMIT_MODES.find((mode) => mode.name === 'on');

/** A relay in a process of its own (bench/outbox-relay-process.js) reading the slot; `onEvent(key, at)` per event unless quiet. */
async function remoteWalRelay({ url, quiet, onEvent }) {
  const child = fork(fileURLToPath(new URL('./outbox-relay-process.js', import.meta.url)), [], {
    env: {
      ...process.env,
      OUTBOX_RELAY_URL: url,
      OUTBOX_RELAY_SLOT: SLOT,
      OUTBOX_RELAY_QUIET: quiet ? '1' : '0',
      OUTBOX_RELAY_OPTIONS: durable.options,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the relay process exited (${code}) before it was ready`)));
  });
  if (onEvent) child.on('message', (message) => onEvent(message.key, message.at));
  return async () => {
    child.send('stop');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    child.kill('SIGKILL');
  };
}

export async function walRows({ log, url }) {
  const pool = benchPool({ connectionString: url, max: WRITERS, options: durable.options });
  const tables = ['outbox_wal_counters', 'outbox_wal_plain', 'outbox_wal_table', 'outbox_wal_events', `${SLOT}_dead`];
  const walStore = new PostgresWalOutboxStore({
    pool,
    slot: SLOT,
    prefix: SLOT,
    deadLetterTable: `${SLOT}_dead`,
    retry: { initialMs: 5, maxMs: 50 },
  });
  let stopRelay;
  try {
    const tableStore = new PostgresOutboxStore({ pool, table: 'outbox_wal_events', notifyChannel: false });
    const bus = new DataSyncEventBus();
    const rows = (table, outbox) =>
      new CounterRows({ pool, aggregate: Counter, publisher: bus, table, ...(outbox ? { outbox } : {}) });
    const wal = rows('outbox_wal_counters', walStore);
    const alone = rows('outbox_wal_plain');
    const table = rows('outbox_wal_table', tableStore);
    await walStore.ensureSetup();
    for (const repository of [wal, alone, table]) await repository.ensureTable();
    await tableStore.ensureTable();
    const walSide = rotatingUpdates(wal, await loadAggregates(wal, 'w'));
    const aloneSide = rotatingUpdates(alone, await loadAggregates(alone, 'p'));
    const tableSide = rotatingUpdates(table, await loadAggregates(table, 't'));
    // Between slices (untimed), both outboxes are emptied as their relays would keep them: the
    // table drained, the slot read and confirmed by this process (which then lets it go, so
    // that nothing decodes it during a slice).
    const emptyTable = async () => void (await drain(tableStore));
    const emptySlot = async () => {
      await walStore.start();
      await walStore.whenHolding();
      await walStore.sync();
      await drain(walStore);
      await walStore.stop();
    };
    const empty = async () => {
      await emptyTable();
      await emptySlot();
    };
    await empty();
    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) {
      await walSide.update(0);
      await aloneSide.update(0);
      await tableSide.update(0);
    }
    const one = (op) => withWal(pool, () => measureBatches(async () => (await op(0), 1), { ms: SLICE_MS }));
    const writers = (op) => withWal(pool, () => perWriterOpsPerSecond(op, { writers: WRITERS, ms: SLICE_MS }));
    const options = { pairs: PAIRS, before: empty };
    const aloneOne = await alternate(one(walSide.update), one(aloneSide.update), options);
    log(
      `wal outbox, 1 writer: ${Math.round(aloneOne.ops)} ops/s, update alone ${Math.round(aloneOne.baselineOps)} ops/s`,
    );
    const aloneMany = await alternate(writers(walSide.update), writers(aloneSide.update), options);
    log(
      `wal outbox, ${WRITERS} writers: ${Math.round(aloneMany.ops)} ops/s, update alone ${Math.round(aloneMany.baselineOps)} ops/s`,
    );
    const tableMany = await alternate(writers(walSide.update), writers(tableSide.update), options);
    log(
      `wal outbox, ${WRITERS} writers: ${Math.round(tableMany.ops)} ops/s, table outbox ${Math.round(tableMany.baselineOps)} ops/s`,
    );
    // The same against the write alone with a relay in another process reading the slot
    // throughout, as in production: the server decodes the WAL and the relay delivers during the slices.
    stopRelay = await remoteWalRelay({ url, quiet: true });
    const readMany = await alternate(writers(walSide.update), writers(aloneSide.update), { pairs: PAIRS });
    log(
      `wal outbox, ${WRITERS} writers, relay reading: ${Math.round(readMany.ops)} ops/s, update alone ${Math.round(readMany.baselineOps)} ops/s`,
    );
    await stopRelay();
    stopRelay = undefined;

    // Lag: the only relay in another process, reporting each event.
    const issued = new Map();
    const arrived = new Map();
    stopRelay = await remoteWalRelay({
      url,
      quiet: false,
      onEvent: (key, at) => arrived.has(key) || arrived.set(key, at),
    });
    // What the quiet relay left unread is read first: wait for a first write of this phase to arrive.
    const [firstId, firstVersion] = await walSide.update(0);
    await waitFor('the first delivery', () => arrived.has(`${firstId}:${firstVersion}`), { timeoutMs: 120_000 });
    const { committed, late } = await pacedWrites({
      writers: WRITERS,
      rate: LAG_RATE,
      ms: LAG_MS,
      write: async (w) => (await walSide.update(w)).join(':'),
    });
    for (const [key, resolvedAt, issuedAt] of committed)
      issued.set(key, { issuedAt: performance.timeOrigin + issuedAt, resolvedAt: performance.timeOrigin + resolvedAt });
    const keys = committed.map(([key]) => key);
    await waitFor('every delivery of the lag phase', () => keys.every((key) => arrived.has(key)), {
      timeoutMs: 120_000,
    });
    const lags = (from) =>
      keys.map((key) => Math.max(0, arrived.get(key) - issued.get(key)[from])).sort((a, b) => a - b);
    const commitLags = lags('resolvedAt');
    const writeLags = lags('issuedAt');
    log(
      `wal outbox lag at ${LAG_RATE} writes/s, relay in another process: commit → handler p50 ${percentile(commitLags, 50).toFixed(2)} ms, p99 ${percentile(commitLags, 99).toFixed(2)} ms`,
    );
    const server = `${await serverFacts(pool)}, ${durable.label}`;
    const checked = 'every update checked (version advanced)';
    const between = 'both outboxes emptied between slices (untimed): the table drained, the slot read and confirmed';
    return [
      {
        case: 'PostgreSQL update with its event as a WAL message (no outbox table)',
        subject: 'PostgresRepository.update, PostgresWalOutboxStore',
        baseline: 'PostgresRepository.update, outbox off',
        ...aloneOne,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs, after ${WARM_MS / 1000} s of warm-up; one writer over ${PER_WRITER} aggregates; ${between}; ${server}`,
        note: notes(checked, cpuNote(aloneOne), walNote(aloneOne)),
      },
      {
        case: `PostgreSQL update with its event as a WAL message (no outbox table), ${WRITERS} writers`,
        subject: 'PostgresRepository.update, PostgresWalOutboxStore',
        baseline: 'PostgresRepository.update, outbox off',
        ...aloneMany,
        target: WITH_EVENT_TARGET,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${WRITERS} writers × ${PER_WRITER} aggregates of their own, a pool of ${WRITERS}; ${between}; ${server}`,
        note: notes(checked, cpuNote(aloneMany), walNote(aloneMany)),
      },
      {
        case: `PostgreSQL update with its event as a WAL message (no outbox table), ${WRITERS} writers, relay reading the slot`,
        subject: 'PostgresRepository.update, PostgresWalOutboxStore',
        baseline: 'PostgresRepository.update, outbox off',
        ...readMany,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${WRITERS} writers; an OutboxRelay in another process reads the slot and delivers (no-op handler) during every slice, both sides; ${server}`,
        note: notes(checked, cpuNote(readMany), walNote(readMany)),
      },
      {
        case: `PostgreSQL update with its event: WAL message against outbox row, ${WRITERS} writers`,
        subject: 'PostgresRepository.update, PostgresWalOutboxStore',
        baseline: 'PostgresRepository.update, PostgresOutboxStore (notifyChannel: false)',
        ...tableMany,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${WRITERS} writers; ${between}; ${server}`,
        note: notes(checked, cpuNote(tableMany), walNote(tableMany)),
      },
      ...[50, 99].map((p) => ({
        case: `PostgreSQL commit → handler lag at ${LAG_RATE} writes/s, p${p}, durable commits, WAL outbox, relay in another process`,
        subject: 'OutboxRelay in another process, PostgresWalOutboxStore',
        ops: percentile(commitLags, p),
        unit: 'ms',
        target: p === 99 ? { max: 5, value: percentile(commitLags, 99), unit: 'ms' } : undefined,
        settings: `${LAG_MS / 1000} s of paced writes by ${WRITERS} writers; the relay's process reads the slot (pgoutput) and reports each event over IPC, both on the machine's clock; ${server}`,
        note: `${keys.length} events, every one arrived; ${late} writes started late; max ${commitLags.at(-1).toFixed(2)} ms; write → handler p50 ${percentile(writeLags, 50).toFixed(2)} ms, p99 ${percentile(writeLags, 99).toFixed(2)} ms`,
      })),
    ];
  } finally {
    await stopRelay?.().catch(() => undefined);
    await walStore.dropSlot().catch(() => undefined);
    await dropBenchTables(pool, tables).catch(() => undefined);
    await pool.end();
  }
}
