// PrepareKey.prepare on Redis (single node and Cluster) and on the MongoDB wire, each beside the
// raw driver doing the same work, and one Node process against the Redis server's own limit.
//  - Redis: ioredis sending the very command the backend sends for a fresh key: EVALSHA of its
//    prepare script (the seal check that recognises a store that lost its data, then
//    `SET <key> <record> PXAT <dropAt>`), with the script and the arguments built by the library's
//    own helpers (from dist/); before each row the bench checks that the raw call and the
//    library's call are the same but for the operation id each call gets.
//  - MongoDB wire: the driver's updateOne(..., { upsert: true }) on the same kind of document.
//  - The server's limit: redis-benchmark pipelining the same SET (same arguments, fresh random
//    keys), in slices alternating with the Node process.
// Every call reserves a key never used before (one counter per side for the whole run, behind a
// prefix of its own) and must answer that it wrote: true from `prepare`, nil from the SET, an
// upsert from the driver, a record per request from redis-benchmark (counted afterwards).
// Subject and baseline share one client per row, so auto-pipelining is compared like with like.
// Against the peer a user would pick instead, a bare SET: `SET key value NX` for a reservation
// held forever, `SET key value PX <ttl> NX` for one that expires (setNxRows). There every answer
// is checked as above, and after each row a sample of each side's keys must be held by the value
// its side wrote and refuse a second reservation; for forever records each side's stored keys are
// counted (one per true answer) and deleted.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import mongoose from 'mongoose';
import { MongoPrepareKeyFactory, RedisPrepareKeyFactory, toTtlAt } from '@ddd-kit/prepare-key';
import { encodeRecord, recordKeyHead } from '../libs/prepare-key/dist/backends/redis/redis-prepare-key.utils.js';
import { PREPARE } from '../libs/prepare-key/dist/backends/redis/redis-prepare-key.scripts.js';
import { RedisSeals } from '../libs/prepare-key/dist/backends/redis/redis-seals.js';
import { newOperationId } from '../libs/prepare-key/dist/operation-id.js';
import { isDeepStrictEqual } from 'node:util';
import {
  alternate,
  cpuNote,
  freshKeys,
  measureConcurrent,
  median,
  notes,
  pairsOf,
  schedSample,
  schedShares,
  sliceMs,
} from './util.js';

const execFileAsync = promisify(execFile);

// Short slices, many pairs: what disturbs a row on this shared machine comes in bursts of a few
// hundred ms (a GC, Redis expiring keys, another process), which in a short slice spoil a few
// pair ratios that the median leaves out, and in a long one move every pair they overlap.
const SLICE_MS = sliceMs(100);
const PAIRS = pairsOf(60);
/** The MongoDB-wire rows: the emulator answers a few hundred calls a second, so longer slices. */
const MONGO_SLICE_MS = sliceMs(500);
const MONGO_PAIRS = pairsOf(10);
/** Records live this long (ttlAt, retentionMs 0), so Redis drops what the bench wrote. */
const TTL_MS = 3000;
const TARGET = 0.95;
/** redis-benchmark: pipeline depth and connections, and the Node side it is compared with. */
const RB_PIPELINE = 16;
const RB_CLIENTS = 50;
const NODE_CALLERS = 256;
const SERVER_SLICE_MS = sliceMs(1000);
const SERVER_PAIRS = pairsOf(4);
/** The issue's targets against SET NX: 0.9× with 64 and 256 callers, 0.8× with 256 auto-pipelined. */
const SET_NX_TARGET = 0.9;
const SET_NX_PIPELINED_TARGET = 0.8;
/** Keys of each side checked after a SET NX row: the last ones it reserved. */
const HOLDER_SAMPLE = 64;
/** Keys each side holds before a refused-reservation row, and asks for in turn. */
const HELD_KEYS = 1000;

const value = { tenant: 'acme', userId: 'u-1f3a9c' }; // keys in canonical order: JSON.stringify gives the canonical JSON
const json = JSON.stringify(value);
/**
 * The value as the raw sides send it: serialised on every call, as `prepare` does and as a
 * user's own SET would (the value is an object in the application, not a string kept ready).
 */
const encoded = () => JSON.stringify(value);
const count = (n) => Math.round(n).toLocaleString('en-US');
const run = `${Date.now().toString(36)}${process.pid}`;

/**
 * The raw call: the library's prepare of a fresh key, `EVALSHA <prepare script> 2 <head><key>}
 * <seal> <record> <dropAt> <op>`, with the library's record encoding, drop time (ttlAt +
 * retentionMs 0), seal key and a fresh operation id. 1: the key was free and holds the record now.
 */
function rawPrepare(client, head, key, ttlAt, op = newOperationId()) {
  const recordKey = `${head}${key}}`;
  const seal = new RedisSeals(client, head.slice(0, head.indexOf('{')), undefined, 0).keyOf(recordKey);
  return client.evalsha(PREPARE.sha, 2, recordKey, seal, encodeRecord(encoded(), ttlAt, op), String(ttlAt), op);
}

/**
 * Makes `prefix` ready for rawPrepare: the script cached on every node (EVALSHA alone, as the
 * library's first EVAL leaves it), and the store sealed as the library seals it (one seal on a
 * single node, one a slot on a Cluster) by one prepare of the library under that prefix.
 */
async function readyForRaw(client, prefix) {
  const nodes = client.isCluster ? client.nodes('master') : [client];
  await Promise.all(nodes.map((node) => node.script('LOAD', PREPARE.lua)));
  const pk = new RedisPrepareKeyFactory(client, { keyPrefix: prefix, retentionMs: 0 }).create('raw');
  checkTrue(await pk.prepare('sealed', toTtlAt(value, Date.now() + TTL_MS)));
}

/** The operation id inside a recorded EVALSHA's record (`['EVALSHA', sha, 2, key, seal, '<ttlAt>|<op>|<json>', …]`). */
const opOf = (call) => (typeof call?.[5] === 'string' ? call[5].split('|')[1] : undefined);

/**
 * Fails the bench unless the raw call sends what the library sends for the same fresh key: the
 * same commands and arguments once each call's own operation id is blanked out.
 */
async function assertSameCall(prefix) {
  const calls = [];
  const record =
    (command, reply) =>
    (...args) => {
      calls.push([command, ...args]);
      return Promise.resolve(reply);
    };
  const recorder = {
    isCluster: false,
    options: {},
    set: record('SET', null),
    evalsha: record('EVALSHA', 1),
    eval: record('EVAL', 1),
  };
  const ttlAt = Date.now() + TTL_MS;
  await new RedisPrepareKeyFactory(recorder, { keyPrefix: prefix, retentionMs: 0 })
    .create('raw')
    .prepare('k0', toTtlAt(value, ttlAt));
  const libraryCalls = calls.splice(0);
  const op = newOperationId();
  await rawPrepare(recorder, recordKeyHead(prefix, 'raw'), 'k0', ttlAt, op);
  const rawCalls = calls.splice(0);
  const blank = (call, id) =>
    JSON.stringify(call.map((arg) => (typeof arg === 'string' && id ? arg.replaceAll(id, '<op>') : arg)));
  const libraryOp = opOf(libraryCalls[0]);
  const library = libraryCalls.map((call) => blank(call, libraryOp)).join();
  const raw = rawCalls.map((call) => blank(call, op)).join();
  if (typeof libraryOp !== 'string' || library !== raw) {
    throw new Error(
      `the raw EVALSHA is not the library's call any more (update rawPrepare in this file):\n  library: ${library}\n  raw:     ${raw}`,
    );
  }
}

const checkTrue = (won) => {
  if (won !== true) throw new Error(`prepare of a fresh key answered ${won}`);
};
const checkWrote = (reply) => {
  if (reply !== 1) throw new Error(`the prepare script on a fresh key answered ${reply}`);
};

/** The library's prepare and the raw EVALSHA on one client, as two measurable sides. */
function redisSides(client, prefix) {
  const pk = new RedisPrepareKeyFactory(client, { keyPrefix: prefix, retentionMs: 0 }).create('sku');
  const subjectKey = freshKeys('k');
  return {
    subject: () => pk.prepare(subjectKey(), toTtlAt(value, Date.now() + TTL_MS)).then(checkTrue),
    baseline: rawSide(client, prefix),
  };
}

const settingsOf = (concurrency, autoPipelining, sliceMs = SLICE_MS, pairs = PAIRS) =>
  `${sliceMs} ms slices, ${pairs} alternating pairs; ${concurrency} concurrent callers on one client; ` +
  `enableAutoPipelining ${autoPipelining}; ttlAt now + ${TTL_MS / 1000} s, retentionMs 0 (default 24 h)`;

/**
 * The library's prepare against the raw EVALSHA of its script, one row per case, each followed by its
 * A/A control on the same client: the raw EVALSHA against itself (two key spaces, nothing else differs),
 * whose distance from 1.00× is what that row cannot resolve.
 */
async function redisRows(log, label, makeClient, cases) {
  const rows = [];
  for (const { concurrency, autoPipelining } of cases) {
    const client = makeClient({ enableAutoPipelining: autoPipelining });
    try {
      const prefix = `ddd-kit:bench:${run}:${label.replace(/\W/g, '')}${concurrency}${autoPipelining ? 'ap' : ''}`;
      await assertSameCall(prefix);
      for (const side of [prefix, `${prefix}:a`, `${prefix}:b`]) await readyForRaw(client, side);
      const { subject, baseline } = redisSides(client, prefix);
      const measure = (op) => () => measureConcurrent(op, { concurrency, ms: SLICE_MS });
      const result = await alternate(measure(subject), measure(baseline), { pairs: PAIRS });
      const control = await alternate(
        measure(rawSide(client, `${prefix}:a`)),
        measure(rawSide(client, `${prefix}:b`)),
        {
          pairs: PAIRS,
        },
      );
      const mode = autoPipelining ? ', auto-pipelining' : '';
      const callers = `${concurrency} caller${concurrency > 1 ? 's' : ''}${mode}`;
      log(
        `${label} prepare ×${concurrency}${mode}: ${count(result.ops)} vs raw EVALSHA ${count(result.baselineOps)} ops/s (${result.ratio.toFixed(2)}×); A/A ${control.ratio.toFixed(2)}×`,
      );
      rows.push(
        {
          case: `${label} prepare, ${callers}`,
          subject: 'RedisPrepareKeyFactory',
          baseline: 'ioredis EVALSHA of the prepare script, same command and arguments',
          ...result,
          target: TARGET,
          control: { interval: control.interval },
          settings: settingsOf(concurrency, autoPipelining),
          note: notes(
            'fresh keys, every answer checked; both sides serialise the value on every call',
            cpuNote(result),
          ),
        },
        {
          case: `${label} A/A control (the resolution of the row above), ${callers}`,
          subject: 'ioredis EVALSHA of the prepare script',
          baseline: 'ioredis EVALSHA of the prepare script, same command and arguments',
          ...control,
          settings: settingsOf(concurrency, autoPipelining),
          note: notes(
            'nothing differs but the key space: any distance from 1.00× is measurement noise; fresh keys, every answer checked',
            cpuNote(control),
          ),
        },
      );
    } finally {
      await client.quit();
    }
  }
  return rows;
}

/** The raw EVALSHA of fresh keys under one prefix (readyForRaw first), every answer checked. */
function rawSide(client, prefix) {
  const head = recordKeyHead(prefix, 'raw');
  const key = freshKeys('k');
  return () => rawPrepare(client, head, key(), Date.now() + TTL_MS).then(checkWrote);
}

/** Keeps the last `size` values pushed. */
function lastOf(size) {
  const ring = [];
  let next = 0;
  return {
    push: (value) => {
      ring[next] = value;
      next = (next + 1) % size;
    },
    values: () => ring.slice(),
  };
}

/**
 * RedisPrepareKeyFactory.prepare against a bare SET … NX on one client: forever records against
 * `SET key value NX`, records with a ttlAt against `SET key value PX <ttl> NX`. Each side reserves
 * fresh keys and must win each one; after the row, the holder checks of holderChecks().
 */
async function setNxRows(log, cases) {
  const rows = [];
  for (const { concurrency, autoPipelining } of cases) {
    for (const expiring of [false, true]) {
      const client = new Redis(process.env.REDIS_URL, { enableAutoPipelining: autoPipelining });
      try {
        const prefix = `ddd-kit:bench:${run}:nx${concurrency}${autoPipelining ? 'ap' : ''}${expiring ? 'ttl' : 'forever'}`;
        const pk = new RedisPrepareKeyFactory(client, { keyPrefix: prefix, retentionMs: 0 }).create('sku');
        const rawPrefix = `${prefix}:set:`;
        const subjectKey = freshKeys('k');
        const rawKey = freshKeys(rawPrefix);
        const won = { subject: 0, baseline: 0 };
        const recent = { subject: lastOf(HOLDER_SAMPLE), baseline: lastOf(HOLDER_SAMPLE) };
        const subject = async () => {
          const key = subjectKey();
          const reserved = await pk.prepare(key, expiring ? toTtlAt(value, Date.now() + TTL_MS) : value);
          checkTrue(reserved);
          won.subject++;
          recent.subject.push(key);
        };
        const baseline = async () => {
          const key = rawKey();
          const reply = expiring
            ? await client.set(key, encoded(), 'PX', TTL_MS, 'NX')
            : await client.set(key, encoded(), 'NX');
          if (reply !== 'OK') throw new Error(`SET … NX on a fresh key answered ${reply}`);
          won.baseline++;
          recent.baseline.push(key);
        };
        const measure = (op) => () => measureConcurrent(op, { concurrency, ms: SLICE_MS });
        const result = await alternate(measure(subject), measure(baseline), { pairs: PAIRS });
        const checked = await holderChecks({ client, pk, recent, won, expiring, prefix, rawPrefix });
        const mode = autoPipelining ? ', auto-pipelining' : '';
        const peer = expiring ? `SET key value PX ${TTL_MS} NX` : 'SET key value NX';
        log(
          `Redis prepare ×${concurrency}${mode}, ${expiring ? 'ttlAt' : 'forever'}: ${count(result.ops)} vs ${peer} ${count(result.baselineOps)} ops/s (${result.ratio.toFixed(2)}×)`,
        );
        rows.push({
          case: `Redis reservation ${expiring ? 'with a ttlAt' : 'held forever'}, ${concurrency} caller${concurrency > 1 ? 's' : ''}${mode}`,
          subject: 'RedisPrepareKeyFactory.prepare',
          baseline: `ioredis ${peer}`,
          peer: true,
          ...result,
          target: concurrency < 64 ? undefined : autoPipelining ? SET_NX_PIPELINED_TARGET : SET_NX_TARGET,
          settings:
            `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${concurrency} concurrent callers on one client; ` +
            `enableAutoPipelining ${autoPipelining}; ${expiring ? `ttlAt now + ${TTL_MS / 1000} s and PX ${TTL_MS}` : 'forever records, no expiry on either side'}, retentionMs 0`,
          note: notes(
            'fresh keys, every answer checked (true / OK); both sides serialise the value on every call',
            checked,
            cpuNote(result),
          ),
        });
      } finally {
        await client.quit();
      }
    }
  }
  return rows;
}

/**
 * After a SET NX row: the last keys each side reserved are held by the value it wrote, and a
 * second reservation of each is refused; forever records are counted, one per true answer (and
 * deleted). Throws on any difference; resolves to what was checked, for the row's note.
 */
async function holderChecks({ client, pk, recent, won, expiring, prefix, rawPrefix }) {
  for (const key of recent.subject.values()) {
    if (!isDeepStrictEqual(await pk.get(key), value))
      throw new Error(`prepare won ${key}, which does not hold its value`);
    if ((await pk.prepare(key, value)) !== false) throw new Error(`a second prepare of ${key} answered true`);
  }
  for (const key of recent.baseline.values()) {
    if ((await client.get(key)) !== json) throw new Error(`SET NX won ${key}, which does not hold its value`);
    if ((await client.set(key, json, 'NX')) !== null) throw new Error(`a second SET NX of ${key} answered OK`);
  }
  const sample = `the last ${HOLDER_SAMPLE} keys of each side hold its value and refuse a second reservation`;
  if (expiring) return sample;
  const stored = {
    subject: await countAndDelete(client, `${recordKeyHead(prefix, 'sku')}*`),
    baseline: await countAndDelete(client, `${rawPrefix}*`),
  };
  if (stored.subject !== won.subject || stored.baseline !== won.baseline)
    throw new Error(
      `stored ${stored.subject} records for ${won.subject} reservations (SET NX: ${stored.baseline} keys for ${won.baseline})`,
    );
  return `${sample}; ${count(stored.subject)} and ${count(stored.baseline)} keys stored, one per reservation won`;
}

/**
 * A refused reservation, the other common path: RedisPrepareKeyFactory.prepare of a key held
 * forever by another call (of the same value: still false) against `SET key value NX` of a key
 * already set (nil). Each side holds HELD_KEYS keys before the row and asks for them in turn;
 * every answer is checked, and afterwards every key still holds what it held and nothing else
 * was stored.
 */
async function heldRows(log, cases) {
  const rows = [];
  for (const { concurrency, autoPipelining } of cases) {
    const client = new Redis(process.env.REDIS_URL, { enableAutoPipelining: autoPipelining });
    try {
      const prefix = `ddd-kit:bench:${run}:held${concurrency}${autoPipelining ? 'ap' : ''}`;
      const pk = new RedisPrepareKeyFactory(client, { keyPrefix: prefix, retentionMs: 0 }).create('sku');
      const rawPrefix = `${prefix}:set:`;
      const keys = Array.from({ length: HELD_KEYS }, (_, i) => `h${i}`);
      const rawKeys = keys.map((key) => `${rawPrefix}${key}`);
      for (const key of keys) checkTrue(await pk.prepare(key, value));
      for (const key of rawKeys) {
        if ((await client.set(key, json, 'NX')) !== 'OK') throw new Error(`SET NX of a fresh key ${key} failed`);
      }
      let s = 0;
      let b = 0;
      const subject = async () => {
        if ((await pk.prepare(keys[s++ % HELD_KEYS], value)) !== false)
          throw new Error('prepare of a key held forever answered true');
      };
      const baseline = async () => {
        if ((await client.set(rawKeys[b++ % HELD_KEYS], encoded(), 'NX')) !== null)
          throw new Error('SET NX of a key already set answered OK');
      };
      const measure = (op) => () => measureConcurrent(op, { concurrency, ms: SLICE_MS });
      const result = await alternate(measure(subject), measure(baseline), { pairs: PAIRS });
      for (const key of keys) {
        if (!isDeepStrictEqual(await pk.get(key), value)) throw new Error(`${key} no longer holds its value`);
      }
      const stored = {
        subject: await countAndDelete(client, `${recordKeyHead(prefix, 'sku')}*`),
        baseline: await countAndDelete(client, `${rawPrefix}*`),
      };
      if (stored.subject !== HELD_KEYS || stored.baseline !== HELD_KEYS)
        throw new Error(`${stored.subject} and ${stored.baseline} keys stored for ${HELD_KEYS} held on each side`);
      const mode = autoPipelining ? ', auto-pipelining' : '';
      log(
        `Redis prepare of a held key ×${concurrency}${mode}: ${count(result.ops)} vs SET NX of a set key ${count(result.baselineOps)} ops/s (${result.ratio.toFixed(2)}×)`,
      );
      rows.push({
        case: `Redis reservation refused (key held forever), ${concurrency} callers${mode}`,
        subject: 'RedisPrepareKeyFactory.prepare',
        baseline: 'ioredis SET key value NX (key already set)',
        peer: true,
        ...result,
        settings:
          `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${concurrency} concurrent callers on one client; ` +
          `enableAutoPipelining ${autoPipelining}; ${HELD_KEYS} keys held forever on each side, asked for in turn`,
        note: notes(
          'every answer checked (false / nil); afterwards each key holds its first value, and nothing else was stored; both sides serialise the value on every call',
          cpuNote(result),
        ),
      });
    } finally {
      await client.quit();
    }
  }
  return rows;
}

/** host, port and password of REDIS_URL, as redis-benchmark takes them. */
function redisBenchmarkTarget(url) {
  const { hostname, port, password } = new URL(url);
  return [
    '-h',
    hostname || '127.0.0.1',
    '-p',
    port || '6379',
    ...(password ? ['-a', decodeURIComponent(password)] : []),
  ];
}

/**
 * One redis-benchmark run of `requests` prepares (the EVALSHA of rawPrepare), pipelined, each
 * on a fresh key (two random 31-bit numbers in the key) under `prefix`. Resolves to the
 * requests per second it reports, once every request is found to have written its record.
 */
async function redisBenchmark(client, prefix, requests, serverShares = () => undefined) {
  const ttlAt = Date.now() + 120_000; // outlives the run and the count below
  const head = recordKeyHead(prefix, 'rb');
  const op = newOperationId(); // one for the run: every key is fresh, so no record holds it
  await readyForRaw(client, prefix);
  const args = [
    ...redisBenchmarkTarget(process.env.REDIS_URL),
    '-n',
    String(requests),
    '-P',
    String(RB_PIPELINE),
    '-c',
    String(RB_CLIENTS),
    '-r',
    '2000000000',
    '--csv',
    // The same call as rawPrepare, with redis-benchmark's random placeholders as the key.
    'EVALSHA',
    PREPARE.sha,
    '2',
    `${head}k__rand_int____rand_int__}`,
    new RedisSeals(client, prefix, undefined, 0).keyOf(`${head}k}`), // one seal on a single node
    encodeRecord(json, ttlAt, op),
    String(ttlAt),
    op,
  ];
  const calls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
  const callsBefore = await calls();
  let stdout;
  try {
    ({ stdout } = await execFileAsync('redis-benchmark', args, { maxBuffer: 1 << 20 }));
  } catch (error) {
    if (error.code === 'ENOENT')
      throw new Error('redis-benchmark is not installed (apt-get install redis-tools, or redis-server)', {
        cause: error,
      });
    throw error;
  }
  // CSV: "test","rps","avg_latency_ms",…: the test name holds the arguments (quotes and all), so read from the end.
  const fields = stdout.trim().split('\n').at(-1).split('","');
  const rps = Number(fields.at(-7));
  if (!(rps > 0)) throw new Error(`redis-benchmark printed no rate:\n${stdout}`);
  const server = serverShares(); // before the count below, which is not part of the run
  // redis-benchmark may send a few more than `requests` (whole pipelines): at least `requests`
  // records, none more than the EVALSHAs the server ran (other clients' on a shared server
  // count there too, so no equality).
  const ran = (await calls()) - callsBefore;
  const written = await countAndDelete(client, `${head}*`);
  if (written < requests || written > ran) {
    throw new Error(`redis-benchmark: ${written} records written for ${requests} requests, by ${ran} EVALSHA calls`);
  }
  return { opsPerSec: rps, server };
}

/** Counts the keys matching `pattern` (no glob characters but the final *), deleting them. */
async function countAndDelete(client, pattern) {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
    n += keys.length;
    if (keys.length > 0) await client.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  return n;
}

/**
 * What one Node process gets out of one Redis server, against what the server does for a
 * client that costs it nothing: redis-benchmark pipelining the same SET.
 */
async function serverLimitRows(log) {
  const autoPipelining = true;
  const client = new Redis(process.env.REDIS_URL, { enableAutoPipelining: autoPipelining });
  const admin = new Redis(process.env.REDIS_URL);
  const rows = [];
  try {
    const prefix = `ddd-kit:bench:${run}:limit`;
    await assertSameCall(prefix);
    await readyForRaw(client, prefix);
    // Size the redis-benchmark runs to about one slice.
    const probe = 100_000;
    const { opsPerSec: calibrated } = await redisBenchmark(admin, `${prefix}:probe`, probe);
    const requests = Math.max(probe, Math.round((calibrated * SERVER_SLICE_MS) / 1000));
    // Where the time goes: the share of each slice redis-server ran, and the shares this Node
    // process ran and waited for a CPU (Linux scheduler counters; absent elsewhere).
    const serverPid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
    const serverSched = () => (Number.isInteger(serverPid) ? schedSample(serverPid) : undefined);
    let slice = 0;
    const server = async () => {
      const before = serverSched();
      const rps = await redisBenchmark(admin, `${prefix}:${slice++}`, requests, () =>
        schedShares(before, serverSched()),
      );
      return rps;
    };
    const { subject, baseline } = redisSides(client, prefix);
    const sides = [
      ['RedisPrepareKeyFactory', subject],
      ['raw ioredis EVALSHA (same command and arguments)', baseline],
    ];
    for (const [name, op] of sides) {
      const node = async () => {
        const before = serverSched();
        const result = await measureConcurrent(op, { concurrency: NODE_CALLERS, ms: SERVER_SLICE_MS });
        return { ...result, server: schedShares(before, serverSched()) };
      };
      const slices = { node: [], server: [] };
      const result = await alternate(
        async () => {
          const r = await node();
          slices.node.push(r);
          return r;
        },
        async () => {
          const r = await server();
          slices.server.push(r);
          return r;
        },
        { pairs: SERVER_PAIRS },
      );
      log(
        `one Node process, ${name}: ${count(result.ops)} vs redis-benchmark ${count(result.baselineOps)} ops/s (${result.ratio.toFixed(2)}×)`,
      );
      rows.push({
        case: `Redis prepare, one Node process vs the server's limit${name === 'RedisPrepareKeyFactory' ? '' : ' (raw client, for reference)'}`,
        subject: name,
        baseline: `redis-benchmark -P ${RB_PIPELINE} -c ${RB_CLIENTS}, same EVALSHA`,
        ...result,
        settings:
          `Node: ${settingsOf(NODE_CALLERS, autoPipelining, SERVER_SLICE_MS, SERVER_PAIRS)}; ` +
          `redis-benchmark: ${count(requests)} requests a slice, ${RB_CLIENTS} connections × ${RB_PIPELINE} pipelined, random fresh keys`,
        note: notes(
          'every redis-benchmark request checked to have written its record',
          result.cpuUsPerOp === undefined ? undefined : `Node CPU per op: ${result.cpuUsPerOp.toFixed(1)} µs`,
          whereTimeGoes(slices),
        ),
      });
    }
    // No target: what one Node process gets is bounded by the process (it runs most of each
    // slice), whatever the client; the raw client's ratio beside it says how far.
    const [library, raw] = rows;
    library.note = notes(
      library.note,
      `the raw client in the same process reached ${raw.ratio.toFixed(2)}× (the row below): the limit is the Node process, not the library`,
    );
  } finally {
    await client.quit();
    await admin.quit();
  }
  return rows;
}

/** Median scheduler shares of the Node and redis-benchmark slices, as a note. */
function whereTimeGoes({ node, server }) {
  const pct = (values) =>
    values.length && values.every((v) => v !== undefined) ? `${Math.round(100 * median(values))} %` : undefined;
  const nodeRun = pct(node.map((s) => s.sched?.run));
  const nodeWait = pct(node.map((s) => s.sched?.wait));
  const serverInNode = pct(node.map((s) => s.server?.run));
  const serverInBench = pct(server.map((s) => s.server?.run));
  if (!nodeRun || !serverInNode || !serverInBench) return undefined;
  return `Node slices: Node ran ${nodeRun} of the time and waited for a CPU ${nodeWait}, redis-server ran ${serverInNode}; redis-benchmark slices: redis-server ran ${serverInBench}`;
}

/** What the tests' MongoDB server is: the emulator, or MongoDB itself. */
function mongoLabel() {
  return process.env.DDD_KIT_MONGODB_URI_SOURCE?.includes('jongodb') ? 'MongoDB-wire emulator (jongodb)' : 'MongoDB';
}

async function mongoRows(log) {
  const label = mongoLabel();
  const connection = await mongoose
    .createConnection(process.env.MONGODB_URI, { dbName: `bench_prepare_${run}` })
    .asPromise();
  const rows = [];
  try {
    const pk = new MongoPrepareKeyFactory(connection, { retentionMs: 0 }).create('sku');
    const subjectCollection = connection.db.collection('prepare_sku');
    const raw = connection.db.collection('raw_sku');
    await raw.createIndex({ expireAt: 1 }, { expireAfterSeconds: 0 });
    await pk.get('warm-up'); // opens the collection and creates its index
    // The emulator in the test servers slows down as a collection grows: start each slice empty.
    const empty = async () => {
      await subjectCollection.deleteMany({});
      await raw.deleteMany({});
    };
    try {
      for (const concurrency of [1, 64]) {
        const subjectKey = freshKeys(`s${concurrency}-`);
        const rawKey = freshKeys(`r${concurrency}-`);
        const subject = () => pk.prepare(subjectKey(), toTtlAt(value, Date.now() + TTL_MS)).then(checkTrue);
        const baseline = async () => {
          const now = Date.now();
          const ttlAt = now + TTL_MS;
          const result = await raw.updateOne(
            { _id: rawKey(), ttlAt: { $lte: now } },
            { $set: { value: JSON.stringify(value), ttlAt, expireAt: new Date(ttlAt) } },
            { upsert: true },
          );
          if (result.upsertedCount !== 1)
            throw new Error(`updateOne upsert on a fresh key inserted ${result.upsertedCount} documents`);
        };
        const measure = (op) => () => measureConcurrent(op, { concurrency, ms: MONGO_SLICE_MS });
        const result = await alternate(measure(subject), measure(baseline), { pairs: MONGO_PAIRS, before: empty });
        log(
          `${label} prepare ×${concurrency}: ${count(result.ops)} vs raw updateOne ${count(result.baselineOps)} ops/s`,
        );
        rows.push({
          case: `${label} prepare, ${concurrency} caller${concurrency > 1 ? 's' : ''}`,
          subject: 'MongoPrepareKeyFactory',
          baseline: 'driver updateOne upsert, same document',
          ...result,
          target: TARGET,
          settings: `${MONGO_SLICE_MS} ms slices, ${MONGO_PAIRS} alternating pairs, collections emptied before each; ${concurrency} concurrent callers; ttlAt now + ${TTL_MS / 1000} s, retentionMs 0 (default 24 h)`,
          note: notes(
            'fresh keys, every answer checked; both sides serialise the value on every call',
            cpuNote(result),
          ),
        });
      }
    } finally {
      await empty();
      await connection.db.dropDatabase().catch(() => undefined);
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
    ...(await setNxRows(log, cases)),
    ...(await heldRows(
      log,
      cases.filter(({ concurrency }) => concurrency >= 64),
    )),
    ...(await redisRows(log, 'Redis Cluster', (options) => new Cluster(nodes, options), [
      { concurrency: 64, autoPipelining: false },
      { concurrency: 256, autoPipelining: false },
      { concurrency: 64, autoPipelining: true },
      { concurrency: 256, autoPipelining: true },
    ])),
    ...(await serverLimitRows(log)),
    ...(await mongoRows(log)),
  ];
}
