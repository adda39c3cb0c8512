// PrepareKey.prepare on Redis (single node and Cluster) and MongoDB, each beside the raw driver
// doing the same work: on Redis, ioredis running the very Lua script the backend runs (EVALSHA),
// on MongoDB, the driver's updateOne(..., { upsert: true }) on the same kind of document. Every
// call reserves a fresh key, the common case. Subject and baseline share one client per row, so
// auto-pipelining is compared like with like.
import { Cluster, Redis } from 'ioredis';
import mongoose from 'mongoose';
import { MongoPrepareKeyFactory, RedisPrepareKeyFactory, toTtlAt } from '@ddd-kit/prepare-key';
import { PREPARE } from '../libs/prepare-key/dist/backends/redis/redis-prepare-key.scripts.js';
import { bestOfAlternating, concurrentOpsPerSecond } from './util.js';

// Short alternating slices, best of each: load from elsewhere on the machine drifts, and
// both sides see it alike.
const MS = 500;
const ROUNDS = 6;
/** Records live this long (ttlAt, no retention), so Redis drops what the bench wrote. */
const TTL_MS = 3000;
const TARGET = 0.95;

const value = (i) => ({ userId: `u-${i}`, tenant: 'acme' });

/** The best of ROUNDS alternating measurements of each side, `concurrency` callers at a time. */
function compareConcurrent(subject, baseline, concurrency, before) {
  const measure = (op) => () => concurrentOpsPerSecond(op, { concurrency, ms: MS });
  return bestOfAlternating(measure(subject), measure(baseline), { rounds: ROUNDS, before });
}

async function redisRows(log, label, makeClient, cases) {
  const rows = [];
  for (const { concurrency, autoPipelining } of cases) {
    const client = makeClient({ enableAutoPipelining: autoPipelining });
    try {
      const run = `${Date.now().toString(36)}${concurrency}`;
      const prefix = `bench:prepare:${run}`;
      const pk = new RedisPrepareKeyFactory(client, { prefix, retentionMs: 0 }).create('sku');
      const subject = (i) => pk.prepare(`k${i}`, toTtlAt(value(i), Date.now() + TTL_MS));
      const baseline = (i) => {
        const ttlAt = Date.now() + TTL_MS;
        return client.evalsha(PREPARE.sha, 1, `${prefix}:{raw:k${i}}`, `${ttlAt}|${JSON.stringify(value(i))}`, String(ttlAt));
      };
      await client.script('LOAD', PREPARE.lua);
      if (client.isCluster) await Promise.all(client.nodes('master').map((node) => node.script('LOAD', PREPARE.lua)));
      const { ops, baselineOps } = await compareConcurrent(subject, baseline, concurrency);
      const mode = autoPipelining ? ', auto-pipelining' : '';
      log(`${label} prepare ×${concurrency}${mode}: ${Math.round(ops)} vs raw EVALSHA ${Math.round(baselineOps)} ops/s`);
      rows.push({
        case: `${label} prepare, ${concurrency} caller${concurrency > 1 ? 's' : ''}${mode}`,
        subject: 'RedisPrepareKeyFactory',
        ops,
        baseline: 'ioredis EVALSHA, same script',
        baselineOps,
        target: TARGET,
        note: 'fresh keys; one Lua script a call',
      });
    } finally {
      await client.quit();
    }
  }
  return rows;
}

async function mongoRows(log) {
  const connection = await mongoose
    .createConnection(process.env.MONGODB_URI, { dbName: `bench_prepare_${Date.now().toString(36)}` })
    .asPromise();
  const rows = [];
  try {
    const pk = new MongoPrepareKeyFactory(connection, { retentionMs: 0 }).create('sku');
    const subjectCollection = connection.db.collection('prepare_sku');
    const raw = connection.db.collection('raw_sku');
    await raw.createIndex({ expireAt: 1 }, { expireAfterSeconds: 0 });
    await pk.get('warm-up'); // opens the collection and creates its index
    // The emulator in the test servers slows down as a collection grows: start each run empty.
    const empty = async () => {
      await subjectCollection.deleteMany({});
      await raw.deleteMany({});
    };
    for (const concurrency of [1, 64]) {
      const subject = (i) => pk.prepare(`k${concurrency}-${i}`, toTtlAt(value(i), Date.now() + TTL_MS));
      const baseline = (i) => {
        const now = Date.now();
        const ttlAt = now + TTL_MS;
        return raw.updateOne(
          { _id: `k${concurrency}-${i}`, ttlAt: { $lte: now } },
          { $set: { value: JSON.stringify(value(i)), ttlAt, expireAt: new Date(ttlAt) } },
          { upsert: true },
        );
      };
      const { ops, baselineOps } = await compareConcurrent(subject, baseline, concurrency, empty);
      log(`MongoDB prepare ×${concurrency}: ${Math.round(ops)} vs raw updateOne ${Math.round(baselineOps)} ops/s`);
      rows.push({
        case: `MongoDB prepare, ${concurrency} caller${concurrency > 1 ? 's' : ''}`,
        subject: 'MongoPrepareKeyFactory',
        ops,
        baseline: 'driver updateOne upsert, same document',
        baselineOps,
        target: TARGET,
        note: process.env.DDD_KIT_MONGODB_URI_SOURCE?.includes('jongodb') ? 'fresh keys; jongodb emulator' : 'fresh keys',
      });
    }
  } finally {
    await connection.close();
  }
  return rows;
}

export default async function bench({ log }) {
  const cases = [
    { concurrency: 1, autoPipelining: false },
    { concurrency: 64, autoPipelining: false },
    { concurrency: 256, autoPipelining: false },
    { concurrency: 256, autoPipelining: true },
  ];
  const nodes = process.env.REDIS_CLUSTER_NODES.split(',').map((hp) => {
    const [host, port] = hp.trim().split(':');
    return { host, port: Number(port) };
  });
  return [
    ...(await redisRows(log, 'Redis', (options) => new Redis(process.env.REDIS_URL, options), cases)),
    ...(await redisRows(log, 'Redis Cluster', (options) => new Cluster(nodes, options), [
      { concurrency: 64, autoPipelining: false },
      { concurrency: 256, autoPipelining: false },
      { concurrency: 256, autoPipelining: true },
    ])),
    ...(await mongoRows(log)),
  ];
}
