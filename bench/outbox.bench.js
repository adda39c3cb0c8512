// The outbox on PostgreSQL. (1) PostgresRepository.update with its events written to the
// outbox in the same statement, beside the same update without the outbox, in alternating
// slices of one run. (2) OutboxRelay under a steady write load: events delivered per second
// and the delivery lag (from the start of the write to the handler), p50 and p99.
import pg from 'pg';
import { AggregateRoot, DataSyncEventBus, OutboxRelay, PostgresOutboxStore, PostgresRepository } from '@ddd-kit/repository';
import { alternate, cpuNote, measureBatches, median, notes } from './util.js';

class Counter extends AggregateRoot {
  constructor(id, label) {
    super(id);
    this.label = label;
    this.count = 0;
  }
}

class CounterRows extends PostgresRepository {
  table = 'outbox_bench_counters';
  columns = { label: 'text NOT NULL', count: 'integer NOT NULL' };
  toRow(counter) {
    return { label: counter.label, count: counter.count };
  }
  toAggregate(row) {
    const counter = new Counter(row.id, row.label);
    counter.count = row.count;
    return counter;
  }
}

const SLICE_MS = 250;
const PAIRS = 24;
const LOAD_PER_SECOND = 400;
const LOAD_SECONDS = 5;
const WRITERS = 8;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export default async function outboxBench({ log }) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set (bench/run.js provides it)');
  const pool = new pg.Pool({ connectionString: url, max: 16, options: '-c synchronous_commit=off' });
  const tables = ['outbox_bench_counters', 'outbox_bench_plain', 'outbox_bench_outbox', 'outbox_bench_relay_counters', 'outbox_bench_relay_outbox'];
  try {
    await pool.query(`DROP TABLE IF EXISTS ${tables.map((t) => `"${t}"`).join(', ')}`);
    const bus = new DataSyncEventBus();
    const store = new PostgresOutboxStore({ pool, table: 'outbox_bench_outbox' });
    const outboxed = new CounterRows({ pool, aggregate: Counter, outbox: store });
    const plain = new CounterRows({ pool, aggregate: Counter, publisher: bus, table: 'outbox_bench_plain' });
    const a = new Counter('a', 'outboxed');
    const b = new Counter('b', 'plain');
    await outboxed.insert(a);
    await plain.insert(b);
    const check = (counter, before) => {
      if (counter.oldVersion !== before + 1) throw new Error(`update left version ${counter.oldVersion} after ${before}`);
    };
    const update = (repository, counter) => async () => {
      const before = counter.oldVersion;
      counter.count++;
      await repository.update(counter);
      check(counter, before);
      return 1;
    };
    const warmUntil = Date.now() + 3000;
    while (Date.now() < warmUntil) {
      await update(outboxed, a)();
      await update(plain, b)();
    }
    // The outbox is emptied before every slice: delivered rows are deleted in production too.
    const result = await alternate(
      () => measureBatches(update(outboxed, a), { ms: SLICE_MS }),
      () => measureBatches(update(plain, b), { ms: SLICE_MS }),
      { pairs: PAIRS, before: async () => void (await pool.query('TRUNCATE "outbox_bench_outbox"')) },
    );
    log(`update with outbox ${Math.round(result.ops)} ops/s, without ${Math.round(result.baselineOps)} ops/s`);
    // The subject really wrote its events: one more update, one more outbox row.
    await pool.query('TRUNCATE "outbox_bench_outbox"');
    await update(outboxed, a)();
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM "outbox_bench_outbox"');
    if (rows[0].n !== 1) throw new Error(`an outboxed update wrote ${rows[0].n} outbox rows`);

    // (2) relay under a steady load.
    const relayStore = new PostgresOutboxStore({ pool, table: 'outbox_bench_relay_outbox' });
    const writes = new CounterRows({ pool, aggregate: Counter, outbox: relayStore, table: 'outbox_bench_relay_counters' });
    const counters = [];
    for (let i = 0; i < WRITERS; i++) {
      const counter = new Counter(`w${i}`, 'load');
      await writes.insert(counter);
      counters.push(counter);
    }
    const startedAt = new Map();
    const lags = [];
    const seen = new Set();
    const relay = new OutboxRelay({
      stores: [relayStore],
      autoStart: false,
      pollIntervalMs: 1000,
      deliver: async (_aggregate, events) => {
        for (const event of events) {
          const key = `${event.id}@${event.version}`;
          if (seen.has(key)) continue; // at least once: a repeat is not a second delivery
          seen.add(key);
          const start = startedAt.get(key);
          if (start !== undefined) lags.push(performance.now() - start);
        }
      },
    });
    await relay.start();
    await relay.drain();
    seen.clear();
    const total = LOAD_PER_SECOND * LOAD_SECONDS;
    const interval = 1000 / (LOAD_PER_SECOND / WRITERS);
    const loadStart = performance.now();
    await Promise.all(
      counters.map(async (counter, w) => {
        for (let n = 0; n < total / WRITERS; n++) {
          const due = loadStart + n * interval + (w * interval) / WRITERS;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          startedAt.set(`${counter.id}@${counter.newVersion}`, performance.now());
          await update(writes, counter)();
        }
      }),
    );
    while (seen.size < total) await new Promise((resolve) => setTimeout(resolve, 5));
    const elapsed = (performance.now() - loadStart) / 1000;
    await relay.stop();
    if (lags.length !== total) throw new Error(`${lags.length} lags measured for ${total} events`);
    const sorted = [...lags].sort((x, y) => x - y);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    log(`relay: ${total} events in ${elapsed.toFixed(2)} s, lag p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (median ${median(lags).toFixed(1)})`);
    return [
      {
        case: 'PostgreSQL update with its outbox row (same statement)',
        subject: 'PostgresRepository.update, outbox on',
        baseline: 'PostgresRepository.update, outbox off',
        ...result,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs, after 3 s of warm-up; one writer, autocommit, NOTIFY on; synchronous_commit off on both sides`,
        note: notes('every update checked (version advanced)', cpuNote(result)),
      },
      {
        case: `OutboxRelay under a steady load (${LOAD_PER_SECOND} writes/s for ${LOAD_SECONDS} s, ${WRITERS} aggregates)`,
        subject: 'OutboxRelay (one, LISTEN/NOTIFY)',
        ops: total / elapsed,
        settings: `PostgreSQL, synchronous_commit off; lag from the start of each write to its handler`,
        note: notes(`delivery lag p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`, `every one of ${total} events delivered`),
      },
    ];
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${tables.map((t) => `"${t}"`).join(', ')}`).catch(() => undefined);
    await pool.end();
  }
}
