// ID generation speed, each generator beside what it should be measured against, and the
// duplicates each one produced in a separate, untimed run of DUP_RUN IDs (a Set per subject):
//  - SnowflakeId against its ceiling: a 12-bit sequence allows 4,096 IDs per millisecond;
//  - CosIdGenerator against crypto.randomUUID (target: 3×);
//  - SegmentId, warm (segments prefetched from Redis), against 20 M/s;
//  - NanoIdGenerator, uuid v7 and @sapphire/snowflake for reference. @sapphire/snowflake
//    wraps its 12-bit increment instead of waiting for the next millisecond, so above
//    4,096 IDs/ms it repeats IDs: its duplicate count shows what the wait prevents.
import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Snowflake } from '@sapphire/snowflake';
import { v7 as uuidv7 } from 'uuid';
import { ClockSync, CosIdGenerator, NanoIdGenerator, SegmentExhaustedError, SegmentId, SnowflakeId } from '@ddd-kit/id-generator';
import { opsPerSecond } from './util.js';

const BATCH = 1_000;
const DUP_RUN = 1_000_000;
const ROUNDS = 2;

/** A batch of BATCH synchronous calls. */
const batchOf = (next) => () => {
  for (let i = 0; i < BATCH; i++) next();
};

/** Best of ROUNDS one-second measurements. */
async function measure(batch) {
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) best = Math.max(best, await opsPerSecond(batch, { ms: 1000, opsPerBatch: BATCH }));
  return best;
}

/**
 * Duplicates among DUP_RUN IDs generated back to back at full speed (kept in an array, counted
 * afterwards, so the counting does not slow the generator below its wrap-around rate).
 */
function duplicates(next) {
  const ids = new Array(DUP_RUN);
  for (let i = 0; i < DUP_RUN; i++) ids[i] = next();
  return DUP_RUN - new Set(ids).size;
}

const dupNote = (name, count) => `${name}: ${count.toLocaleString('en-US')} duplicates in ${DUP_RUN.toLocaleString('en-US')}`;

export default async function ({ log }) {
  const rows = [];
  const uuidOps = await measure(batchOf(randomUUID));
  const uuidDups = duplicates(randomUUID);
  log(`crypto.randomUUID: ${Math.round(uuidOps).toLocaleString('en-US')} IDs/s`);

  {
    const snowflake = new SnowflakeId({ machineId: 1 });
    const ops = await measure(batchOf(() => snowflake.generate()));
    const dups = duplicates(() => snowflake.generate());
    rows.push({ case: 'SnowflakeId generate() (Radix62)', subject: 'SnowflakeId', ops, baseline: '12-bit sequence limit', baselineOps: 4_096_000, target: 0.97, note: dupNote('SnowflakeId', dups) });
  }

  {
    const cosid = new CosIdGenerator({ machineId: 1 });
    const ops = await measure(batchOf(() => cosid.generate()));
    const dups = duplicates(() => cosid.generate());
    rows.push({
      case: 'CosIdGenerator generate()',
      subject: 'CosIdGenerator',
      ops,
      baseline: 'crypto.randomUUID',
      baselineOps: uuidOps,
      target: 3,
      note: `${dupNote('CosIdGenerator', dups)}; ${dupNote('randomUUID', uuidDups)}`,
    });
  }

  {
    const global = new ClockSync(new CosIdGenerator({ machineId: 2 }));
    const ops = await measure(batchOf(() => global.generate()));
    const dups = duplicates(() => global.generate());
    rows.push({ case: 'ClockSync(CosIdGenerator) (the module\'s global generator)', subject: 'ClockSync(CosIdGenerator)', ops, baseline: 'crypto.randomUUID', baselineOps: uuidOps, note: dupNote('ClockSync(CosId)', dups) });
  }

  {
    const redis = new Redis(process.env.REDIS_URL);
    const key = `ddd-kit:bench:segment:${process.pid}:${Date.now()}`;
    try {
      // Segments of 2,000,000 numbers, 4 reserved ahead: one INCRBY per 0.1 s at 20 M/s.
      const segment = await new SegmentId({ redis, key, segmentSize: 2_000_000, prefetchSegments: 4 }).ready();
      let waits = 0;
      const batch = async () => {
        try {
          for (let i = 0; i < BATCH * 10; i++) segment.generate();
        } catch (error) {
          if (!(error instanceof SegmentExhaustedError)) throw error;
          waits++;
          await segment.generateAsync();
        }
        await yieldToIo(); // let prefetched segments arrive, as any application's event loop does
      };
      for (let i = 0; i < 50; i++) await batch(); // warm up: segments in hand
      let ops = 0;
      for (let r = 0; r < ROUNDS; r++) ops = Math.max(ops, await opsPerSecond(batch, { ms: 1000, opsPerBatch: BATCH * 10 }));
      const ids = new Array(DUP_RUN);
      for (let i = 0; i < DUP_RUN; i++) {
        try {
          ids[i] = segment.generate();
        } catch {
          ids[i] = await segment.generateAsync();
        }
      }
      const dups = DUP_RUN - new Set(ids).size;
      segment.close();
      rows.push({
        case: 'SegmentId generate() (warm, Redis INCRBY segments)',
        subject: 'SegmentId',
        ops,
        baseline: '20 M/s target',
        baselineOps: 20_000_000,
        target: 1,
        note: `${dupNote('SegmentId', dups)}; ${waits} waits for a segment`,
      });
    } finally {
      await redis.del(key);
      redis.disconnect();
    }
  }

  {
    const nano = new NanoIdGenerator();
    const ops = await measure(batchOf(() => nano.generate()));
    const dups = duplicates(() => nano.generate());
    rows.push({ case: 'NanoIdGenerator generate() (21 chars)', subject: 'NanoIdGenerator', ops, baseline: 'crypto.randomUUID', baselineOps: uuidOps, note: dupNote('NanoId', dups) });
  }

  {
    const ops = await measure(batchOf(() => uuidv7()));
    const dups = duplicates(() => uuidv7());
    rows.push({ case: 'peer: uuid v7', subject: 'uuid v7', ops, baseline: 'crypto.randomUUID', baselineOps: uuidOps, note: dupNote('uuid v7', dups) });
  }

  {
    const sapphire = new Snowflake(1577203200000n);
    const ops = await measure(batchOf(() => sapphire.generate()));
    const dups = duplicates(() => sapphire.generate());
    rows.push({
      case: 'peer: @sapphire/snowflake generate()',
      subject: '@sapphire/snowflake',
      ops,
      baseline: '12-bit sequence limit',
      baselineOps: 4_096_000,
      note: `${dupNote('@sapphire/snowflake', dups)} (its 12-bit increment wraps within a millisecond)`,
    });
  }
  return rows;
}
