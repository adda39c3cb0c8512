// The outbox against pg-transactional-outbox (bench/peers/transactional-outbox.js says what it
// sends and guarantees), both on the private cluster of bench/outbox.bench.js, durable commits
// (synchronous_commit on, the default) on every connection of both sides:
// - writes: PostgresRepository.update with its PostgresOutboxStore (default settings: relays woken
//   after the commit) beside the peer's transaction (the same checked UPDATE and its message), one writer
//   and 16 writers, each over aggregates of its own; between slices both outboxes are emptied
//   (untimed) and counted: one event or message per write, or the run fails;
// - commit → handler lag at LAG_RATE writes/s: OutboxRelay (woken after the commit) beside the
//   peer's logical-replication listener, both running throughout, in alternating slices of paced
//   writes. Every written event must reach its handler exactly once: a loss or a repeat fails the
//   run on the ddd-kit side, and is counted and reported on the peer's (a peer's bug is a finding,
//   not a reason to stop).
import pg from 'pg';
import { DataSyncEventBus } from '@ddd-kit/repository';
import { OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { transactionalOutboxPeer } from './peers/transactional-outbox.js';
import {
  Counter,
  CounterRows,
  drain,
  loadAggregates,
  pacedWrites,
  PER_WRITER,
  rotatingUpdates,
  until,
  WRITERS,
} from './outbox-support.js';
import { COMMIT_MODES, serverFacts } from './postgres.js';
import {
  alternate,
  cpuNote,
  measureBatches,
  median,
  notes,
  pairsOf,
  percentile,
  perWriterOpsPerSecond,
  sliceMs,
} from './util.js';

const SLICE_MS = sliceMs(250);
const PAIRS = pairsOf(16);
const WARM_MS = sliceMs(3000);
const LAG_RATE = 200;
const LAG_SLICE_MS = sliceMs(4000);
const LAG_PAIRS = pairsOf(3);
/** How long deliveries may stall after a slice's writes before what is missing counts as lost. */
const STALL_MS = 10_000;
/** The issue's targets: 1 writer ≥ 1.5× the peer, 16 writers ≥ 1.3×; lag p50 ≤ the peer's, p99 ≤ 5 ms. */
const ONE_WRITER_TARGET = 1.5;
const WRITERS_TARGET = 1.3;
const P99_MAX_MS = 5;

const durable = COMMIT_MODES.find((mode) => mode.name === 'on');

export async function peerRows({ log, url }) {
  const pool = new pg.Pool({ connectionString: url, max: WRITERS + 4, options: durable.options });
  const tables = ['outbox_peer_counters', 'outbox_peer_events'];
  let peer;
  try {
    const server = `${await serverFacts(pool)}, ${durable.label} on every connection of both sides`;
    const store = new PostgresOutboxStore({ pool, table: 'outbox_peer_events' });
    const repository = new CounterRows({
      pool,
      aggregate: Counter,
      publisher: new DataSyncEventBus(),
      outbox: store,
      table: 'outbox_peer_counters',
    });
    await repository.ensureTable();
    await store.ensureTable();
    const ours = rotatingUpdates(repository, await loadAggregates(repository, 'o'));
    await drain(store); // the inserts' events
    peer = await transactionalOutboxPeer({
      url,
      pool,
      ddl: (table) => repository.createTableStatement().replace('"outbox_peer_counters"', `"${table}"`),
      counters: 'peer_counters',
      outbox: 'peer_outbox',
      writers: WRITERS,
      perWriter: PER_WRITER,
      connectionOptions: durable.options,
    });

    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) {
      await ours.update(0);
      await peer.update(0);
    }
    await drain(store);
    await peer.drain();
    const before = { ours: ours.done(), theirs: peer.writes() };
    const stored = { ours: 0, theirs: 0 };
    const emptyBoth = async () => {
      stored.ours += await drain(store);
      stored.theirs += await peer.drain();
    };

    const one = (op) => () => measureBatches(async () => (await op(0), 1), { ms: SLICE_MS });
    const writers = (op) => () => perWriterOpsPerSecond(op, { writers: WRITERS, ms: SLICE_MS });
    const single = await alternate(one(ours.update), one(peer.update), { pairs: PAIRS, before: emptyBoth });
    log(
      `update + event, 1 writer: ddd-kit ${Math.round(single.ops)} ops/s, pg-transactional-outbox ${Math.round(single.baselineOps)} ops/s`,
    );
    const many = await alternate(writers(ours.update), writers(peer.update), { pairs: PAIRS, before: emptyBoth });
    log(
      `update + event, ${WRITERS} writers: ddd-kit ${Math.round(many.ops)} ops/s, pg-transactional-outbox ${Math.round(many.baselineOps)} ops/s`,
    );
    await emptyBoth();
    const written = { ours: ours.done() - before.ours, theirs: peer.writes() - before.theirs };
    if (stored.ours !== written.ours || stored.theirs !== written.theirs)
      throw new Error(
        `the outboxes held ${stored.ours} events for ${written.ours} ddd-kit writes and ${stored.theirs} messages for ${written.theirs} pg-transactional-outbox writes`,
      );
    await peer.verify();

    const lag = await lagRows({ log, store, ours, peer, server });

    const writeSettings = (who) =>
      `${SLICE_MS} ms slices, ${PAIRS} alternating pairs, after ${WARM_MS / 1000} s of warm-up; ${who}; outboxes emptied between slices, no relay or listener running; ${server}`;
    const checked = `every write checked (version advanced / one row updated); ${written.ours} events and ${written.theirs} messages found in the outboxes, one per write`;
    const sends =
      'the peer sends BEGIN, the UPDATE, its INSERT and COMMIT on a pooled client; both sides share one pool';
    return [
      {
        case: 'PostgreSQL update + its event against pg-transactional-outbox, 1 writer, durable commits',
        subject: 'PostgresRepository.update, PostgresOutboxStore (defaults)',
        baseline: 'pg-transactional-outbox: UPDATE + initializeMessageStorage in one transaction',
        peer: true,
        ...single,
        target: ONE_WRITER_TARGET,
        settings: writeSettings(`one writer over ${PER_WRITER} aggregates each side`),
        note: notes(checked, sends, cpuNote(single)),
      },
      {
        case: `PostgreSQL update + its event against pg-transactional-outbox, ${WRITERS} writers, durable commits`,
        subject: 'PostgresRepository.update, PostgresOutboxStore (defaults)',
        baseline: 'pg-transactional-outbox: UPDATE + initializeMessageStorage in one transaction',
        peer: true,
        ...many,
        target: WRITERS_TARGET,
        settings: writeSettings(
          `${WRITERS} writers × ${PER_WRITER} aggregates of their own each side, a pool of ${WRITERS + 4}`,
        ),
        note: notes(checked, sends, cpuNote(many)),
      },
      ...lag,
    ];
  } finally {
    await peer?.close().catch(() => undefined);
    await pool.query(`DROP TABLE IF EXISTS ${tables.map((t) => `"${t}"`).join(', ')}`).catch(() => undefined);
    await pool.end();
  }
}

/**
 * Who got which event when: `commit(key, at)` when a write's call resolved, `arrive(key)` when
 * a handler got it (a second arrival is a repeat), `settle(keys)` waits until all arrived or
 * none did for STALL_MS.
 */
function deliveryTrack() {
  const committedAt = new Map();
  const arrivedAt = new Map();
  let repeats = 0;
  return {
    commit: (key, at) => committedAt.set(key, at),
    arrive: (key) => {
      if (arrivedAt.has(key)) repeats++;
      else arrivedAt.set(key, performance.now());
    },
    arrived: (key) => arrivedAt.has(key),
    settle: async (keys) => {
      let missing = keys.length + 1;
      let since = Date.now();
      for (;;) {
        const now = keys.filter((key) => !arrivedAt.has(key)).length;
        if (now === 0) return;
        if (now < missing) [missing, since] = [now, Date.now()];
        else if (Date.now() - since > STALL_MS) return;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    },
    /** Lags (ms, sorted) of the keys that arrived, those the handler saw before the writer saw its commit as 0. */
    lags: (keys) =>
      keys
        .filter((key) => arrivedAt.has(key))
        .map((key) => Math.max(0, arrivedAt.get(key) - committedAt.get(key)))
        .sort((a, b) => a - b),
    early: (keys) => keys.filter((key) => arrivedAt.get(key) < committedAt.get(key)).length,
    lost: (keys) => keys.filter((key) => !arrivedAt.has(key)).length,
    repeats: () => repeats,
  };
}

/**
 * Commit → handler lag at LAG_RATE writes/s, ddd-kit's relay against the peer's listener, both
 * running throughout; LAG_PAIRS pairs of paced slices, alternating which side goes first.
 */
async function lagRows({ log, store, ours, peer, server }) {
  const track = { ours: deliveryTrack(), theirs: deliveryTrack() };
  const write = {
    ours: async (w) => (await ours.update(w)).join(':'),
    theirs: (w) => peer.update(w),
  };
  const relay = new OutboxRelay({
    stores: [store],
    deliver: async (_aggregate, events) => {
      for (const event of events) track.ours.arrive(`${event.id}:${event.version}`);
    },
    owner: 'bench-peer-relay',
  });
  await relay.start();
  const stopListener = await peer.listen(async (message) => track.theirs.arrive(message.id));
  const slices = { ours: [], theirs: [] };
  try {
    // Both consumers are up once a first write of each side has reached its handler.
    for (const side of ['ours', 'theirs']) {
      const key = await write[side](0);
      track[side].commit(key, performance.now());
      await until(
        () => track[side].arrived(key),
        `the first ${side === 'ours' ? 'relay' : 'listener'} delivery`,
        60_000,
      );
    }
    for (let pair = 0; pair < LAG_PAIRS; pair++) {
      for (const side of pair % 2 === 0 ? ['theirs', 'ours'] : ['ours', 'theirs']) {
        const { committed, late } = await pacedWrites({
          writers: WRITERS,
          rate: LAG_RATE,
          ms: LAG_SLICE_MS,
          write: write[side],
        });
        for (const [key, at] of committed) track[side].commit(key, at);
        const keys = committed.map(([key]) => key);
        await track[side].settle(keys);
        slices[side].push({ keys, late });
      }
    }
    // Stragglers of the last slices: once more, over everything written.
    for (const side of ['ours', 'theirs']) await track[side].settle(slices[side].flatMap((slice) => slice.keys));
  } finally {
    await relay.stop();
    await stopListener();
  }

  const all = (side) => slices[side].flatMap((slice) => slice.keys);
  const facts = {};
  for (const side of ['ours', 'theirs']) {
    const keys = all(side);
    const lags = track[side].lags(keys);
    facts[side] = {
      events: keys.length,
      lost: track[side].lost(keys),
      repeats: track[side].repeats(),
      early: track[side].early(keys),
      late: slices[side].reduce((n, slice) => n + slice.late, 0),
      p50: percentile(lags, 50),
      p99: percentile(lags, 99),
      max: lags.at(-1),
      slices: slices[side].map((slice) => {
        const sliceLags = track[side].lags(slice.keys);
        return { p50: percentile(sliceLags, 50), p99: percentile(sliceLags, 99) };
      }),
    };
  }
  const { ours: o, theirs: t } = facts;
  if (o.lost !== 0 || o.repeats !== 0)
    throw new Error(
      `OutboxRelay: ${o.lost} of ${o.events} events never reached the handler and ${o.repeats} arrived twice (pg-transactional-outbox: ${t.lost} lost, ${t.repeats} repeated)`,
    );
  const pairRatios = (p) => o.slices.map((slice, i) => t.slices[i][p] / slice[p]);
  const pairsSummary = (ratios) => ({ ratio: median(ratios), spread: [Math.min(...ratios), Math.max(...ratios)] });
  const ms = (n) => `${n.toFixed(2)} ms`;
  log(
    `lag at ${LAG_RATE} writes/s: ddd-kit p50 ${ms(o.p50)}, p99 ${ms(o.p99)}; pg-transactional-outbox p50 ${ms(t.p50)}, p99 ${ms(t.p99)}, ${t.lost} of ${t.events} lost, ${t.repeats} repeated`,
  );
  const side = (name, f) =>
    `${name}: ${f.events} events, ${f.lost} lost, ${f.repeats} delivered twice, max ${ms(f.max)}${f.early ? `, ${f.early} handled before the writer saw its commit (0 ms)` : ''}, ${f.late} writes started late`;
  const settings =
    `${LAG_PAIRS} alternating pairs of ${LAG_SLICE_MS / 1000} s slices at ${LAG_RATE} writes/s (${WRITERS} paced writers) per side; ` +
    `lag: from the write's call resolving (its commit) to the handler's call; OutboxRelay with default settings (woken after the commit: in process, LISTEN/NOTIFY; polling every 1 s besides), ` +
    `the peer's replication listener (pgoutput, default mutex strategy, outbox defaults); both consumers running throughout; ${server}`;
  const note = notes(
    side('ddd-kit', o),
    side('pg-transactional-outbox', t),
    `pg-transactional-outbox ${peer.logSummary()}`,
    "lags pooled over each side's slices; ratio: the median over pairs of the peer's lag ÷ ddd-kit's (above 1: ddd-kit delivers sooner); spread: the lowest and highest pair",
  );
  const common = {
    subject: 'OutboxRelay',
    baseline: 'pg-transactional-outbox replication listener',
    peer: true,
    unit: 'ms',
    pairs: LAG_PAIRS,
    settings,
    note,
  };
  return [
    {
      case: `PostgreSQL commit → handler lag at ${LAG_RATE} writes/s, p50, durable commits`,
      ...common,
      ops: o.p50,
      baselineOps: t.p50,
      ...pairsSummary(pairRatios('p50')),
      target: 1,
    },
    {
      case: `PostgreSQL commit → handler lag at ${LAG_RATE} writes/s, p99, durable commits`,
      ...common,
      ops: o.p99,
      baselineOps: t.p99,
      ...pairsSummary(pairRatios('p99')),
      target: { max: P99_MAX_MS, value: o.p99, unit: 'ms' },
    },
  ];
}
