// reconcileUniqueKeys on consistent data — every member holds its handle, every handle is held
// by its member — at 10 k, 100 k and 1 M members in a PostgreSQL repository, with the
// reservations on Redis (a server of the bench's own, so that a million keys never fill the
// shared one) and on PostgreSQL. Each run walks the reservations (one page: its owners in one
// query) and then the members (one page: their reservations in one batch). Seeding is done by
// the servers themselves (generate_series, a Lua loop) and is not measured; each table is then
// vacuumed and analysed, as autovacuum would (the test server runs without it: a table never
// analysed gets plans that sort it whole for every page).
// - Against the floor: the same reads by the raw drivers, page by page and with nothing compared
//   (SCAN + MGET or SELECT of a page of reservations, SELECT … = ANY of their owners; SELECT of a
//   page of members, MGET or SELECT … = ANY of their handles). ops/s are records (reservations +
//   members) per second.
// - Flatness: records per second at 100 k and at 1 M beside 10 k: 1.00× means the cost per record
//   does not grow with the size. The target: within 1.5× (0.67×). 100 k and 10 k run in
//   alternating pairs; a run at 1 M takes tens of seconds, so it runs once on each side and its
//   row compares it with the median at 10 k.
// The note gives the seconds and µs per record of the subject, and the process's largest
// resident set and heap during its runs.
import { Aggregate } from '@ddd-kit/id-generator';
import { PostgresPrepareKeyFactory, RedisPrepareKeyFactory, TTL_FOREVER } from '@ddd-kit/prepare-key';
import { AggregateRoot, PostgresRepository, reconcileUniqueKeys, UniqueKey } from '@ddd-kit/repository';
import { Redis } from 'ioredis';
import { startRedisServer } from '../test/support/server-provider.js';
import { benchPool, serverFacts } from './postgres.js';
import { alternate, pairsOf, QUICK } from './util.js';

const SIZES = QUICK ? [1_000, 10_000] : [10_000, 100_000, 1_000_000];
const PAGE = 500;
const PAIRS = pairsOf(6);
/** A size whose run takes tens of seconds: one run on each side. */
const LARGE = 1_000_000;
const pairsAt = (size) => (size >= LARGE ? 1 : PAIRS);
const thousands = (size) => size.toLocaleString('en-US');

class Member extends AggregateRoot {
  constructor(id, handle) {
    super(id);
    this.handle = handle;
  }
}
UniqueKey('handle', (member) => member.handle)(Member);
Aggregate({ name: 'bench_member' })(Member);

class Members extends PostgresRepository {
  columns = { handle: 'text NOT NULL' };
  toRow(member) {
    return { handle: member.handle };
  }
  toAggregate(row) {
    return new Member(row.id, row.handle);
  }
}

export default async function ({ log }) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set (bench/run.js provides it)');
  const pool = benchPool({ connectionString: url, max: 16 });
  const server = await startRedisServer();
  // A database of its own for each size: SCAN walks a whole database, so a size beside larger
  // ones would pay for their keys too.
  const redis = new Map(SIZES.map((size, i) => [size, new Redis(server.url, { db: i + 1 })]));
  const run = Date.now().toString(36);
  const rows = [];
  try {
    const facts = `${await serverFacts(pool)}; Redis of the bench's own`;
    const backends = [
      {
        label: 'Redis',
        open: (size) => redisReservations(redis.get(size), pool, `bench_reconcile_${run}_${size}:`, size),
      },
      { label: 'PostgreSQL', open: (size) => postgresReservations(pool, `bench_reconcile_keys_${run}_${size}`, size) },
    ];
    for (const backend of backends) {
      const sides = {};
      for (const size of SIZES) {
        const table = `bench_reconcile_members_${run}_${size}`;
        await seedMembers(pool, table, size);
        const reservations = await backend.open(size);
        const repository = new Members({ pool, table, aggregate: Member, uniqueKeys: { handle: reservations.key } });
        sides[size] = { subject: measured(repository, size), floor: () => timed(() => reservations.floor(table)) };
      }
      const [small] = SIZES;
      // Untimed, once: the first run of each side compiles its code paths.
      await sides[small].subject();
      await sides[small].floor();
      for (const size of SIZES) {
        const { subject, floor } = sides[size];
        const result = await alternate(subject, floor, { pairs: pairsAt(size) });
        sides[size].result = result;
        const usPerRecord = 1e6 / result.ops;
        rows.push({
          case: `reconcileUniqueKeys, ${thousands(size)} members, consistent, records/s`,
          subject: `${backend.label} reservations, PostgresRepository`,
          baseline: 'the same pages read by the raw drivers, nothing compared',
          ...result,
          settings: `pages of ${PAGE}, ${pairsAt(size)} alternating pair(s); ${facts}`,
          note:
            `${((2 * size) / result.ops).toFixed(1)} s a run, ${usPerRecord.toFixed(1)} µs a record` +
            (size === small
              ? ''
              : `, ${(sides[small].result.ops / result.ops).toFixed(2)}× the cost at ${thousands(small)}`) +
            `; largest RSS ${subject.peakMb().rss} MB, heap ${subject.peakMb().heap} MB`,
        });
        log(
          `${backend.label} ${size}: ${usPerRecord.toFixed(1)} µs a record, ${result.ratio.toFixed(2)}× of the floor`,
        );
      }
      for (const size of SIZES.slice(1)) {
        const base = `the same at ${thousands(small)}`;
        const row = {
          case: `reconcileUniqueKeys records/s at ${thousands(size)} ÷ at ${thousands(small)} members`,
          subject: `${backend.label} reservations, PostgresRepository`,
          target: 0.67,
          settings: `pages of ${PAGE}; ${facts}`,
        };
        if (pairsAt(size) === pairsAt(small)) {
          const flat = await alternate(sides[size].subject, sides[small].subject, { pairs: PAIRS });
          rows.push({ ...row, baseline: base, ...flat, settings: `${row.settings}, ${PAIRS} alternating pairs` });
          log(`${backend.label} ${size} ÷ ${small}: ${flat.ratio.toFixed(2)}×`);
        } else {
          // One run at this size: beside the median of the runs at the smallest, not in pairs.
          const ops = sides[size].result.ops;
          const baselineOps = sides[small].result.ops;
          rows.push({ ...row, baseline: `${base} (its median)`, ops, baselineOps, ratio: ops / baselineOps, pairs: 1 });
          log(`${backend.label} ${size} ÷ ${small}: ${(ops / baselineOps).toFixed(2)}×`);
        }
      }
    }
  } finally {
    await dropEverything(pool, run).catch((error) => log(`cleaning up: ${error}`));
    for (const client of redis.values()) client.disconnect();
    await server.stop();
    await pool.end();
  }
  return rows;
}

/** One reconciliation, checked: nothing to repair on consistent data. Tracks the largest RSS and heap. */
function measured(repository, size) {
  const peak = { rss: 0, heap: 0 };
  const measure = () =>
    timed(async () => {
      const sample = () => {
        const { rss, heapUsed } = process.memoryUsage();
        peak.rss = Math.max(peak.rss, rss);
        peak.heap = Math.max(peak.heap, heapUsed);
      };
      const sampler = setInterval(sample, 50);
      try {
        const report = await reconcileUniqueKeys(repository, { pageSize: PAGE, graceMs: 0 });
        const repaired = report.released + report.restored + report.failed + report.spared;
        if (report.live !== size || repaired !== 0 || report.shared.length + report.heldByOther.length !== 0)
          throw new Error(`reconciliation of consistent data changed something: ${JSON.stringify(report)}`);
        return report.scanned + size;
      } finally {
        sample();
        clearInterval(sampler);
      }
    });
  measure.peakMb = () => ({ rss: Math.round(peak.rss / 2 ** 20), heap: Math.round(peak.heap / 2 ** 20) });
  return measure;
}

async function timed(work) {
  const start = process.hrtime.bigint();
  const records = await work();
  return { opsPerSec: records / (Number(process.hrtime.bigint() - start) / 1e9) };
}

async function seedMembers(pool, table, size) {
  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY, version bigint NOT NULL, handle text NOT NULL)`);
  await pool.query(
    `INSERT INTO ${table} SELECT 'm' || lpad(i::text, 7, '0'), 1, 'h' || lpad(i::text, 7, '0') FROM generate_series(0, $1 - 1) AS i`,
    [size],
  );
  await pool.query(`VACUUM ANALYZE ${table}`);
}

async function redisReservations(redis, pool, keyPrefix, size) {
  // Written by the server itself, 100 k at a time: the bench process holds none of them.
  const seed = `for i = tonumber(ARGV[1]), tonumber(ARGV[2]) - 1 do
  local n = string.format('%07d', i)
  redis.call('SET', ARGV[3] .. '{handle:h' .. n .. '}', ARGV[4] .. '|seed|{"aggregate":"bench_member","at":1,"id":"m' .. n .. '"}')
end`;
  for (let at = 0; at < size; at += 100_000)
    await redis.eval(seed, 0, at, Math.min(size, at + 100_000), keyPrefix, TTL_FOREVER);
  return {
    key: new RedisPrepareKeyFactory(redis, { keyPrefix, seal: false }).create('handle'),
    floor: async (table) => {
      let records = 0;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}{handle:*`, 'COUNT', PAGE);
        cursor = next;
        if (keys.length === 0) continue;
        const values = await redis.mget(keys);
        const ids = values.map((v) => JSON.parse(v.slice(v.indexOf('|', v.indexOf('|') + 1) + 1)).id);
        await pool.query(`SELECT id, version, handle FROM ${table} WHERE id = ANY($1::text[])`, [ids]);
        records += keys.length;
      } while (cursor !== '0');
      return (
        records +
        (await walkMembers(pool, table, (handles) => redis.mget(handles.map((h) => `${keyPrefix}{handle:${h}}`))))
      );
    },
  };
}

async function postgresReservations(pool, table, size) {
  const factory = new PostgresPrepareKeyFactory(pool, { table, sweepIntervalMs: 0 });
  const key = factory.create('handle');
  await key.get('any'); // creates the table
  await pool.query(
    `INSERT INTO ${table} (name, key, value, ttl_at, op) SELECT 'handle', 'h' || lpad(i::text, 7, '0'), '{"aggregate":"bench_member","at":1,"id":"m' || lpad(i::text, 7, '0') || '"}', $2, 'seed' FROM generate_series(0, $1 - 1) AS i`,
    [size, TTL_FOREVER],
  );
  await pool.query(`VACUUM ANALYZE ${table}`);
  return {
    key,
    floor: async (members) => {
      let records = 0;
      let cursor = null;
      for (;;) {
        const { rows } = await pool.query(
          `SELECT key, value FROM ${table} WHERE name = 'handle' AND ($1::text IS NULL OR key > $1) ORDER BY key LIMIT $2`,
          [cursor, PAGE],
        );
        if (rows.length === 0) break;
        await pool.query(`SELECT id, version, handle FROM ${members} WHERE id = ANY($1::text[])`, [
          rows.map((r) => JSON.parse(r.value).id),
        ]);
        records += rows.length;
        cursor = rows.at(-1).key;
      }
      return (
        records +
        (await walkMembers(pool, members, (handles) =>
          pool.query(`SELECT key, value, ttl_at FROM ${table} WHERE name = 'handle' AND key = ANY($1::text[])`, [
            handles,
          ]),
        ))
      );
    },
  };
}

/** Reads the members page by page, and each page's handles through `readHandles`: the records read. */
async function walkMembers(pool, table, readHandles) {
  let records = 0;
  let cursor = '';
  for (;;) {
    const { rows } = await pool.query(`SELECT id, version, handle FROM ${table} WHERE id > $1 ORDER BY id LIMIT $2`, [
      cursor,
      PAGE,
    ]);
    if (rows.length === 0) return records;
    await readHandles(rows.map((r) => r.handle));
    records += rows.length;
    cursor = rows.at(-1).id;
  }
}

/** Drops what this run wrote: its tables (the Redis server goes with its keys). */
async function dropEverything(pool, run) {
  const { rows } = await pool.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE $1`, [
    `bench_reconcile_%${run}%`,
  ]);
  for (const { tablename } of rows) await pool.query(`DROP TABLE IF EXISTS "${tablename}"`);
}
