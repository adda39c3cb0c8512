// The outbox against pg-transactional-outbox (bench/peers/transactional-outbox.js says what it
// sends and guarantees), both on the private cluster of bench/outbox.bench.js, durable commits
// (synchronous_commit on, the default) on every connection of both sides:
// - writes: PostgresRepository.update with its PostgresOutboxStore (default settings, no relay
//   running: relays elsewhere woken by a NOTIFY after the commit) beside the peer's transaction
//   (the same checked UPDATE and its message), one writer and 16 writers, each over aggregates of
//   its own; between slices both outboxes are emptied (untimed) and counted: one event or message
//   per write, or the run fails;
// - commit → handler and write → handler lag at LAG_RATE writes/s: OutboxRelay in the writing
//   process, and in another process, beside the peer's logical-replication listener, in turns
//   of paced slices (lagRows).
//   Every written event must reach its handler exactly once: a loss or a repeat fails the run on
//   the ddd-kit side, and is counted and reported on the peer's (a peer's bug is a finding, not a
//   reason to stop).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
  WRITERS,
} from './outbox-support.js';
import { waitFor } from '../test/support/wait.js';
import { COMMIT_MODES, serverFacts, benchPool, dropBenchTables } from './postgres.js';
import {
  alternate,
  cpuNote,
  measureBatches,
  notes,
  pairsOf,
  percentile,
  perWriterOpsPerSecond,
  ratioSummary,
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
  const pool = benchPool({ connectionString: url, max: WRITERS + 4, options: durable.options });
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

    const lag = await lagRows({ log, store, ours, peer, server, url });

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
    await dropBenchTables(pool, tables).catch(() => undefined);
    await pool.end();
  }
}

/**
 * Who got which event when, on the machine's clock (performance.timeOrigin + performance.now(),
 * which a relay in another process reads too): `write(key, issuedAt, resolvedAt)` for each
 * write, `arrive(key, at)` when a handler got it (a second arrival is a repeat), `settle(keys)`
 * waits until all arrived or none did for STALL_MS.
 */
function deliveryTrack() {
  const writes = new Map();
  const arrivedAt = new Map();
  let repeats = 0;
  const since = (keys, from) =>
    keys.filter((key) => arrivedAt.has(key)).map((key) => arrivedAt.get(key) - writes.get(key)[from]);
  return {
    write: (key, issuedAt, resolvedAt) => writes.set(key, { issuedAt, resolvedAt }),
    arrive: (key, at = now()) => {
      if (arrivedAt.has(key)) repeats++;
      else arrivedAt.set(key, at);
    },
    arrived: (key) => arrivedAt.has(key),
    settle: async (keys) => {
      let missing = keys.length + 1;
      let since = Date.now();
      // Arrival times are taken as they come: how soon this notices does not change them. The
      // ceiling only ends a run whose deliveries trickle on without end.
      await waitFor(
        'the deliveries of the slice to arrive or stall',
        () => {
          const left = keys.filter((key) => !arrivedAt.has(key)).length;
          if (left < missing) [missing, since] = [left, Date.now()];
          return left === 0 || Date.now() - since > STALL_MS;
        },
        { timeoutMs: 600_000 },
      );
    },
    /** Write → handler (ms, sorted): from the write's call to the handler's. */
    lags: (keys) => since(keys, 'issuedAt').sort((a, b) => a - b),
    /** Commit → handler (ms, sorted): from the write's call resolving (its commit known); negative when the handler ran first. */
    afterCommit: (keys) => since(keys, 'resolvedAt').sort((a, b) => a - b),
    lost: (keys) => keys.filter((key) => !arrivedAt.has(key)).length,
    repeats: () => repeats,
  };
}

const now = () => performance.timeOrigin + performance.now();

/** A relay in a process of its own (bench/outbox-relay-process.js), reporting into `track`. */
async function remoteRelay({ url, table, track }) {
  const child = fork(fileURLToPath(new URL('./outbox-relay-process.js', import.meta.url)), [], {
    env: { ...process.env, OUTBOX_RELAY_URL: url, OUTBOX_RELAY_TABLE: table, OUTBOX_RELAY_OPTIONS: durable.options },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the relay process exited (${code}) before it was ready`)));
  });
  child.on('message', (message) => track.arrive(message.key, message.at));
  return async () => {
    child.send('stop');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    child.kill('SIGKILL');
  };
}

/**
 * Write → handler lag at LAG_RATE writes/s, in LAG_PAIRS rounds of three paced slices, in turns:
 * - ours: OutboxRelay in the writing process (the default: RepositoryModule runs one in every
 *   instance), which the store hands each write as it commits;
 * - remote: only a relay in another process, woken by NOTIFY after the commit, then claiming;
 * - theirs: the peer's logical-replication listener, running throughout.
 * The relay in another process runs throughout too (it takes what the one in process does not).
 */
async function lagRows({ log, store, ours, peer, server, url }) {
  const kit = deliveryTrack();
  const theirs = deliveryTrack();
  const track = { ours: kit, remote: kit, theirs };
  const write = {
    ours: async (w) => (await ours.update(w)).join(':'),
    remote: async (w) => (await ours.update(w)).join(':'),
    theirs: (w) => peer.update(w),
  };
  const deliver = async (_aggregate, events) => {
    const at = now();
    for (const event of events) kit.arrive(`${event.id}:${event.version}`, at);
  };
  let inProcess;
  const startInProcess = async (name) => {
    inProcess = new OutboxRelay({ stores: [store], deliver, owner: `bench-peer-relay-${name}` });
    await inProcess.start();
  };
  const stopRemote = await remoteRelay({ url, table: 'outbox_peer_events', track: kit });
  const stopListener = await peer.listen(async (message) => theirs.arrive(message.id));
  const slices = { ours: [], remote: [], theirs: [] };
  try {
    // Every consumer is up once a first write of each side has reached its handler.
    await startInProcess('first');
    for (const side of ['ours', 'theirs']) {
      const issuedAt = now();
      const key = await write[side](0);
      track[side].write(key, issuedAt, now());
      await waitFor(`the first ${side} delivery`, () => track[side].arrived(key), { timeoutMs: 60_000 });
    }
    await inProcess.stop();
    const sides = ['theirs', 'ours', 'remote'];
    for (let pair = 0; pair < LAG_PAIRS; pair++) {
      for (const side of [...sides.slice(pair % 3), ...sides.slice(0, pair % 3)]) {
        if (side === 'ours') await startInProcess(`${pair}`);
        const { committed, late } = await pacedWrites({
          writers: WRITERS,
          rate: LAG_RATE,
          ms: LAG_SLICE_MS,
          write: write[side],
        });
        // pacedWrites reads performance.now(); the track reads the machine's clock.
        for (const [key, resolvedAt, issuedAt] of committed)
          track[side].write(key, performance.timeOrigin + issuedAt, performance.timeOrigin + resolvedAt);
        const keys = committed.map(([key]) => key);
        await track[side].settle(keys);
        if (side === 'ours') await inProcess.stop();
        slices[side].push({ keys, late });
      }
    }
    // Stragglers of the last slices: once more, over everything written.
    for (const side of sides) await track[side].settle(slices[side].flatMap((slice) => slice.keys));
  } finally {
    await inProcess?.stop();
    await stopListener();
    await stopRemote();
  }

  // Two measures per side, over the same deliveries: commit → handler (from the write's call
  // resolving, its commit known; a handler that ran before that counts 0 ms) and write →
  // handler (from issuing the write: what a client that issued a command waits for its read model).
  const measures = {
    commit: (side, keys) => track[side].afterCommit(keys).map((lag) => Math.max(0, lag)),
    write: (side, keys) => track[side].lags(keys),
  };
  const facts = {};
  for (const side of ['ours', 'remote', 'theirs']) {
    const keys = slices[side].flatMap((slice) => slice.keys);
    const of = (measure) => {
      const lags = measures[measure](side, keys);
      return {
        p50: percentile(lags, 50),
        p99: percentile(lags, 99),
        max: lags.at(-1),
        slices: slices[side].map((slice) => {
          const sliceLags = measures[measure](side, slice.keys);
          return { p50: percentile(sliceLags, 50), p99: percentile(sliceLags, 99) };
        }),
      };
    };
    facts[side] = {
      events: keys.length,
      lost: track[side].lost(keys),
      late: slices[side].reduce((n, slice) => n + slice.late, 0),
      beforeResolve: track[side].afterCommit(keys).filter((lag) => lag < 0).length,
      commit: of('commit'),
      write: of('write'),
    };
  }
  const { ours: o, remote: r, theirs: t } = facts;
  const kitRepeats = kit.repeats();
  if (o.lost !== 0 || r.lost !== 0 || kitRepeats !== 0)
    throw new Error(
      `OutboxRelay: ${o.lost + r.lost} of ${o.events + r.events} events never reached a handler and ${kitRepeats} arrived twice (pg-transactional-outbox: ${t.lost} lost, ${theirs.repeats()} repeated)`,
    );
  /** The median over rounds of the peer's lag ÷ ddd-kit's; none when a ddd-kit lag is 0 (no ratio to take). */
  const pairsSummary = (f, measure, p) => {
    const ratios = f[measure].slices.map((slice, i) => t[measure].slices[i][p] / slice[p]);
    if (!ratios.every(Number.isFinite)) return { leads: 'ddd-kit ahead' };
    return ratioSummary(ratios);
  };
  const ms = (n) => `${n.toFixed(2)} ms`;
  const said = (measure) =>
    `in process p50 ${ms(o[measure].p50)}, p99 ${ms(o[measure].p99)}; in another process p50 ${ms(r[measure].p50)}, p99 ${ms(r[measure].p99)}; ` +
    `pg-transactional-outbox p50 ${ms(t[measure].p50)}, p99 ${ms(t[measure].p99)}`;
  log(`commit → handler at ${LAG_RATE} writes/s: ${said('commit')}`);
  log(
    `write → handler at ${LAG_RATE} writes/s: ${said('write')}; pg-transactional-outbox ${t.lost} of ${t.events} lost, ${theirs.repeats()} repeated`,
  );
  const side = (name, f) =>
    `${name}: ${f.events} events, ${f.lost} lost, commit → handler max ${ms(f.commit.max)}, write → handler p50 ${ms(f.write.p50)}, p99 ${ms(f.write.p99)}` +
    `${f.beforeResolve ? `, ${f.beforeResolve} handled before the write's call returned (0 ms after the commit)` : ''}; ${f.late} writes started late`;
  const settings =
    `${LAG_PAIRS} rounds of three ${LAG_SLICE_MS / 1000} s slices at ${LAG_RATE} writes/s (${WRITERS} paced writers), in turns: ` +
    'OutboxRelay in the writing process (default settings: the store hands it each write as it commits), ' +
    'only an OutboxRelay in another process (default settings: woken by LISTEN/NOTIFY after the commit, then it claims; its handler reports over IPC), ' +
    `and the peer's replication listener (pgoutput, default mutex strategy, outbox defaults), running throughout; times on one clock; ${server}`;
  const note = (f) =>
    notes(
      side('ddd-kit', f),
      side('pg-transactional-outbox', t),
      `ddd-kit delivered nothing twice; pg-transactional-outbox delivered ${theirs.repeats()} twice and ${peer.logSummary()}`,
      "lags pooled over each side's slices; ratio: the median over rounds of the peer's lag ÷ ddd-kit's (above 1: ddd-kit delivers sooner)",
    );
  const common = {
    baseline: 'pg-transactional-outbox replication listener',
    peer: true,
    unit: 'ms',
    pairs: LAG_PAIRS,
    settings,
  };
  const inProcessSide = { subject: 'OutboxRelay in the writing process', note: note(o), ...common };
  const remoteSide = { subject: 'OutboxRelay in another process', note: note(r), ...common };
  const row = (f, rest, measure, p, label, target) => ({
    case: `PostgreSQL ${label} lag at ${LAG_RATE} writes/s, ${p}, durable commits${f === r ? ', relay in another process' : ''}`,
    ...rest,
    ops: f[measure][p],
    baselineOps: t[measure][p],
    ...pairsSummary(f, measure, p),
    target,
  });
  return [
    // The issue's measure: p50 no later than the peer's, p99 within 5 ms.
    row(o, inProcessSide, 'commit', 'p50', 'commit → handler', { max: t.commit.p50, value: o.commit.p50, unit: 'ms' }),
    row(o, inProcessSide, 'commit', 'p99', 'commit → handler', { max: P99_MAX_MS, value: o.commit.p99, unit: 'ms' }),
    row(r, remoteSide, 'commit', 'p50', 'commit → handler'),
    row(r, remoteSide, 'commit', 'p99', 'commit → handler'),
    row(o, inProcessSide, 'write', 'p50', 'write → handler'),
    row(o, inProcessSide, 'write', 'p99', 'write → handler'),
  ];
}
