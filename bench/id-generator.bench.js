// ID generation speed, each generator beside its yardstick, and the duplicates each one
// produced in a separate, untimed run of DUP_RUN IDs (a Set per subject):
//  - SnowflakeId against its ceiling: 2^sequenceBits IDs per millisecond (a computed limit);
//  - CosIdGenerator against crypto.randomUUID (target: 5×), measured in alternating slices;
//  - SegmentId, warm (segments prefetched from Redis), against 20 M/s, with the segment sizes
//    it ran with (and once more with the defaults);
//  - NanoIdGenerator for reference.
// Against the peers a user would pick instead (uuid v7, ulid, @sapphire/snowflake), the rows
// count distinct IDs per second. For uuid v7 and ulid, whose repeats do not depend on their
// rate, that is the rate in slices times the distinct share of 1,000,000 IDs generated back to
// back. @sapphire/snowflake wraps its 12-bit increment instead of waiting for the next
// millisecond, so above 4,096 IDs/ms it repeats IDs, more the faster it runs: there (and for
// SnowflakeId beside it) each slice generates 1,000,000 IDs into an array and counts the
// distinct ones. Its raw rate is not what an application gets; its distinct rate is.
// Every generated ID is stored (into `sink` or the array), so none can be skipped as dead code.
// A ddd-kit generator that repeats an ID fails the run.
import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Snowflake } from '@sapphire/snowflake';
import { monotonicFactory } from 'ulid';
import { v7 as uuidv7 } from 'uuid';
import {
  ClockSync,
  CosIdGenerator,
  NanoIdGenerator,
  SegmentExhaustedError,
  SegmentId,
  SnowflakeId,
} from '@ddd-kit/id-generator';
import {
  alternate,
  measureBatches,
  measureBatchesSync,
  median,
  notes,
  pairsOf,
  sink,
  SINK_MASK,
  sliceMs,
} from './util.js';

const BATCH = 1_000;
const SEGMENT_BATCH = 10_000;
const DUP_RUN = 1_000_000;
const SLICE_MS = sliceMs(500);
const PAIRS = pairsOf(6);
/** CosIdGenerator against any other generator a user would pick (issue 24: ≥ 5×). */
const COSID_TARGET = 5;
const SEGMENT_TARGET = 20_000_000;
const TIMING = `${SLICE_MS} ms slices, ${PAIRS} alternating pairs, batches of ${BATCH.toLocaleString('en-US')}`;

/**
 * A slice of synchronous batches of `next()`. Each side gets a loop compiled on its own
 * (`new Function`), so the call to `next` stays monomorphic and no side pays for the
 * generators measured before it.
 */
function syncSide(next) {
  const loop = new Function(
    'next',
    'sink',
    'mask',
    'n',
    'return function batch() { for (let i = 0; i < n; i++) sink[i & mask] = next(); return n; };',
  )(next, sink, SINK_MASK, BATCH);
  loop(); // compile before the first timed slice
  return () => measureBatchesSync(loop, { ms: SLICE_MS });
}

/**
 * Duplicates among DUP_RUN IDs generated back to back at full speed (kept in an array, counted
 * afterwards, so the counting does not slow the generator below its wrap-around rate).
 */
async function duplicates(next) {
  const ids = new Array(DUP_RUN);
  for (let i = 0; i < DUP_RUN; i++) ids[i] = await next();
  return DUP_RUN - new Set(ids).size;
}

function syncDuplicates(next) {
  const ids = new Array(DUP_RUN);
  for (let i = 0; i < DUP_RUN; i++) ids[i] = next();
  return DUP_RUN - new Set(ids).size;
}

/**
 * Distinct IDs per second of a generator whose repeats do not depend on how fast it runs
 * (random or counter-based): its rate in ring-sink slices (syncSide), times the distinct share
 * of DUP_RUN IDs generated back to back. Storing every ID of a timed slice would price the
 * array and the garbage collector rather than the generator.
 */
function shareSide(name, next, { mustBeDistinct }) {
  const repeats = syncDuplicates(next);
  if (mustBeDistinct) noDuplicates(name, repeats);
  const share = (DUP_RUN - repeats) / DUP_RUN;
  const slice = syncSide(next);
  const raw = [];
  const measure = () => {
    const result = slice();
    raw.push(result.opsPerSec);
    return { ...result, opsPerSec: result.opsPerSec * share };
  };
  const summary = () =>
    `${name}: ${count(Math.round(median(raw)))} IDs/s raw, ${count(repeats)} duplicates in ${count(DUP_RUN)} generated back to back`;
  return { measure, summary };
}

/**
 * Distinct IDs per second of a generator whose repeats grow with its rate (a snowflake whose
 * sequence wraps within a millisecond): each slice generates DUP_RUN IDs back to back into an
 * array (timed; its own compiled loop, as in syncSide) and counts the distinct ones (untimed).
 */
function sliceSide(name, next, { mustBeDistinct }) {
  const ids = new Array(DUP_RUN);
  const fill = new Function(
    'next',
    'ids',
    'n',
    'return function fill() { for (let i = 0; i < n; i++) ids[i] = next(); };',
  )(next, ids, DUP_RUN);
  fill(); // compile before the first timed slice
  const slices = [];
  const measure = () => {
    const start = process.hrtime.bigint();
    fill();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const repeats = DUP_RUN - new Set(ids).size;
    if (mustBeDistinct) noDuplicates(name, repeats);
    slices.push({ raw: DUP_RUN / seconds, repeats });
    return { opsPerSec: (DUP_RUN - repeats) / seconds };
  };
  const summary = () =>
    `${name}: ${count(Math.round(median(slices.map((s) => s.raw))))} IDs/s raw, ${count(median(slices.map((s) => s.repeats)))} duplicates per ${count(DUP_RUN)} (median of ${slices.length} slices)`;
  return { measure, summary };
}

const DISTINCT = {
  share: {
    side: shareSide,
    settings: `${TIMING}; distinct IDs/s = IDs/s × the distinct share of ${DUP_RUN.toLocaleString('en-US')} IDs generated back to back`,
  },
  slices: {
    side: sliceSide,
    settings: `${PAIRS} alternating pairs, each slice ${DUP_RUN.toLocaleString('en-US')} IDs back to back into an array, the distinct ones counted afterwards`,
  },
};

/** A row of distinct IDs per second, a ddd-kit generator against a peer; `method`: 'share' or 'slices' (above). */
async function distinctRow({ title, method, subject, subjectNext, peer, peerNext, target, settings }) {
  const { side, settings: how } = DISTINCT[method];
  const ours = side(subject, subjectNext, { mustBeDistinct: true });
  const theirs = side(peer, peerNext, { mustBeDistinct: false });
  const result = await alternate(ours.measure, theirs.measure, { pairs: PAIRS });
  return {
    case: `${title}: distinct IDs per second`,
    subject,
    baseline: peer,
    peer: true,
    ...result,
    target,
    settings: `${how}${settings ? `; ${settings}` : ''}`,
    note: notes(ours.summary(), theirs.summary()),
  };
}

const count = (n) => n.toLocaleString('en-US');
const dupNote = (name, n) => `${name}: ${count(n)} duplicates in ${count(DUP_RUN)}`;

/** A ddd-kit generator must never repeat an ID: that is a bug, not a measurement. */
function noDuplicates(name, n) {
  if (n !== 0) throw new Error(`${name} issued ${count(n)} duplicate IDs in ${count(DUP_RUN)}`);
  return dupNote(name, n);
}

export default async function ({ log }) {
  const rows = [];
  const uuid = syncSide(randomUUID);
  const uuidDups = syncDuplicates(randomUUID);
  if (uuidDups !== 0) throw new Error(`crypto.randomUUID repeated ${uuidDups} IDs`);

  {
    const snowflake = new SnowflakeId({ machineId: 1 });
    const limit = 2 ** snowflake.sequenceBits * 1000;
    const result = await alternate(
      syncSide(() => snowflake.generate()),
      limit,
      { pairs: PAIRS },
    );
    rows.push({
      case: 'SnowflakeId generate() (Radix62)',
      subject: 'SnowflakeId',
      baseline: `${snowflake.sequenceBits}-bit sequence limit (2^${snowflake.sequenceBits} per ms, computed)`,
      ...result,
      target: 0.97,
      settings: `${TIMING}; ${snowflake.timestampBits}/${snowflake.machineBits}/${snowflake.sequenceBits} bits (defaults), machineId 1`,
      note: noDuplicates(
        'SnowflakeId',
        syncDuplicates(() => snowflake.generate()),
      ),
    });
  }

  {
    const cosid = new CosIdGenerator({ machineId: 1 });
    const result = await alternate(
      syncSide(() => cosid.generate()),
      uuid,
      { pairs: PAIRS },
    );
    rows.push({
      case: 'CosIdGenerator generate()',
      subject: 'CosIdGenerator',
      baseline: 'crypto.randomUUID',
      peer: true,
      ...result,
      target: COSID_TARGET,
      settings: `${TIMING}; machineId 1`,
      note: notes(
        noDuplicates(
          'CosIdGenerator',
          syncDuplicates(() => cosid.generate()),
        ),
        dupNote('randomUUID', uuidDups),
      ),
    });
  }

  {
    const global = new ClockSync(new CosIdGenerator({ machineId: 2 }));
    const result = await alternate(
      syncSide(() => global.generate()),
      uuid,
      { pairs: PAIRS },
    );
    rows.push({
      case: "ClockSync(CosIdGenerator) (the module's global generator)",
      subject: 'ClockSync(CosIdGenerator)',
      baseline: 'crypto.randomUUID',
      ...result,
      settings: `${TIMING}; ClockSync defaults, machineId 2`,
      note: noDuplicates(
        'ClockSync(CosId)',
        syncDuplicates(() => global.generate()),
      ),
    });
  }

  const redis = new Redis(process.env.REDIS_URL);
  try {
    const defaults = new SegmentId({ redis, key: 'unused' });
    const defaultSizes = `segmentSize ${count(defaults.segmentSize)}, prefetchSegments ${defaults.prefetchSegments}`;
    // Segments of 2,000,000 numbers, 4 reserved ahead: one INCRBY per 0.1 s at 20 M/s.
    for (const sizes of [{ segmentSize: 2_000_000, prefetchSegments: 4 }, {}]) {
      const key = `ddd-kit:bench:segment:${process.pid}:${Date.now()}`;
      try {
        const segment = await new SegmentId({ redis, key, ...sizes }).ready();
        let waits = 0;
        // Counts what the batch produced: a batch cut short by SegmentExhaustedError counts
        // the IDs before it, plus the one generateAsync() then waited for.
        const batch = async () => {
          let produced = 0;
          try {
            for (; produced < SEGMENT_BATCH; produced++) sink[produced & SINK_MASK] = segment.generate();
          } catch (error) {
            if (!(error instanceof SegmentExhaustedError)) throw error;
            waits++;
            sink[0] = await segment.generateAsync();
            produced++;
          }
          await yieldToIo(); // let prefetched segments arrive, as any application's event loop does
          return produced;
        };
        for (let i = 0; i < 50; i++) await batch(); // warm up: segments in hand
        waits = 0;
        const result = await alternate(() => measureBatches(batch, { ms: SLICE_MS }), SEGMENT_TARGET, { pairs: PAIRS });
        const timedWaits = waits;
        const dups = await duplicates(() => {
          try {
            return segment.generate();
          } catch {
            return segment.generateAsync();
          }
        });
        segment.close();
        const configured = sizes.segmentSize !== undefined;
        const settings = configured
          ? `segmentSize ${count(segment.segmentSize)}, prefetchSegments ${segment.prefetchSegments} (defaults: ${defaultSizes})`
          : `defaults: ${defaultSizes}`;
        rows.push({
          case: `SegmentId generate() (warm, Redis INCRBY segments${configured ? '' : ', default sizes'})`,
          subject: 'SegmentId',
          baseline: '20 M/s target',
          ...result,
          target: configured ? 1 : undefined,
          settings: `${SLICE_MS} ms slices × ${PAIRS}, batches of ${count(SEGMENT_BATCH)} with an event-loop turn between; ${settings}`,
          note: notes(noDuplicates('SegmentId', dups), `${count(timedWaits)} waits for a segment while timed`),
        });
      } finally {
        await redis.del(key);
      }
    }
  } finally {
    redis.disconnect();
  }

  {
    const nano = new NanoIdGenerator();
    const result = await alternate(
      syncSide(() => nano.generate()),
      uuid,
      { pairs: PAIRS },
    );
    rows.push({
      case: `NanoIdGenerator generate() (${nano.generate().length} chars)`,
      subject: 'NanoIdGenerator',
      baseline: 'crypto.randomUUID',
      ...result,
      settings: `${TIMING}; defaults`,
      note: noDuplicates(
        'NanoId',
        syncDuplicates(() => nano.generate()),
      ),
    });
  }

  {
    const cosid = new CosIdGenerator({ machineId: 3 });
    // ulid's monotonic factory draws randomness once per millisecond and increments within it;
    // plain ulid() draws 16 random bytes one getRandomValues call at a time, orders of
    // magnitude slower, so the peer is given its fast form.
    const ulid = monotonicFactory();
    for (const [peer, peerNext, settings] of [
      ['uuid v7', () => uuidv7(), 'uuid v7 with its default options'],
      [
        'ulid',
        () => ulid(),
        "ulid's monotonicFactory() (plain ulid() is far slower: a getRandomValues call per character)",
      ],
    ]) {
      rows.push(
        await distinctRow({
          title: `CosIdGenerator against ${peer}`,
          method: 'share',
          subject: 'CosIdGenerator',
          subjectNext: () => cosid.generate(),
          peer,
          peerNext,
          target: COSID_TARGET,
          settings: `CosIdGenerator machineId 3; ${settings}`,
        }),
      );
    }
  }

  {
    const snowflake = new SnowflakeId({ machineId: 4 });
    const sapphire = new Snowflake(1577203200000n);
    rows.push(
      await distinctRow({
        title: 'SnowflakeId against @sapphire/snowflake',
        method: 'slices',
        subject: 'SnowflakeId',
        subjectNext: () => snowflake.generate(),
        peer: '@sapphire/snowflake',
        peerNext: () => sapphire.generate(),
        settings: `SnowflakeId ${snowflake.timestampBits}/${snowflake.machineBits}/${snowflake.sequenceBits} bits, machineId 4 (waits for the next millisecond when its sequence runs out); @sapphire/snowflake: its 12-bit increment, which wraps within a millisecond`,
      }),
    );
  }
  for (const row of rows)
    log(`${row.case}: ${Math.round(row.ops).toLocaleString('en-US')} IDs/s, ${row.ratio.toFixed(2)}× ${row.baseline}`);
  return rows;
}
