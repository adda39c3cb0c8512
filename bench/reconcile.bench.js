// reconcileUniqueKeys on consistent data — every member holds its handle, every handle is held
// by its member — at 10 k and 100 k members in a PostgreSQL repository, with the reservations on
// Redis and on PostgreSQL. Each run walks the reservations (one page: its owners in one query)
// and then the members (one page: their reservations in one batch).
// - Against the floor: the same reads by the raw drivers, page by page and with nothing compared
//   (SCAN + MGET or SELECT of a page of reservations, SELECT … = ANY of their owners; SELECT of a
//   page of members, MGET or SELECT … = ANY of their handles). ops/s are records (reservations +
//   members) per second.
// - Flatness: the same reconciliation at 100 k beside 10 k (records per second): 1.00× means the
//   cost per record does not grow with the size. The target: within 1.5× (0.67×).
// The note gives the process's largest resident set during the subject's runs.
import { Aggregate } from '@ddd-kit/id-generator';
import { PostgresPrepareKeyFactory, RedisPrepareKeyFactory, TTL_FOREVER } from '@ddd-kit/prepare-key';
import { AggregateRoot, PostgresRepository, reconcileUniqueKeys, UniqueKey } from '@ddd-kit/repository';
import { Redis } from 'ioredis';
import { benchPool, serverFacts } from './postgres.js';
import { alternate, pairsOf, QUICK } from './util.js';

const SIZES = QUICK ? [1_000, 10_000] : [10_000, 100_000];
const PAGE = 500;
const PAIRS = pairsOf(6);

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

const id = (i) => `m${String(i).padStart(7, '0')}`;
const handle = (i) => `h${String(i).padStart(7, '0')}`;
const ownerJson = (i) => `{"aggregate":"bench_member","at":1,"id":"${id(i)}"}`;

export default async function ({ log }) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set (bench/run.js provides it)');
  const pool = benchPool({ connectionString: url, max: 16 });
  const redis = new Redis(process.env.REDIS_URL);
  const run = Date.now().toString(36);
  const rows = [];
  try {
    const server = await serverFacts(pool);
    const backends = [
      { label: 'Redis', open: (size) => redisReservations(redis, pool, `bench_reconcile_${run}_${size}:`, size) },
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
      for (const size of SIZES) {
        const { subject, floor } = sides[size];
        const result = await alternate(subject, floor, { pairs: PAIRS });
        rows.push({
          case: `reconcileUniqueKeys, ${size.toLocaleString('en-US')} members, consistent, records/s`,
          subject: `${backend.label} reservations, PostgresRepository`,
          baseline: 'the same pages read by the raw drivers, nothing compared',
          ...result,
          settings: `pages of ${PAGE}, ${PAIRS} alternating pairs; ${server}`,
          note: `largest RSS ${subject.peakMb()} MB`,
        });
        log(`${backend.label} ${size}: ${result.ratio.toFixed(2)}× of the floor`);
      }
      const [small, large] = SIZES;
      const flat = await alternate(sides[large].subject, sides[small].subject, { pairs: PAIRS });
      rows.push({
        case: `reconcileUniqueKeys records/s at ${large.toLocaleString('en-US')} ÷ at ${small.toLocaleString('en-US')} members`,
        subject: `${backend.label} reservations, PostgresRepository`,
        baseline: `the same at ${small.toLocaleString('en-US')}`,
        ...flat,
        target: 0.67,
        settings: `pages of ${PAGE}, ${PAIRS} alternating pairs; ${server}`,
      });
      log(`${backend.label} flatness: ${flat.ratio.toFixed(2)}×`);
    }
  } finally {
    await dropEverything(pool, redis, run).catch((error) => log(`cleaning up: ${error}`));
    redis.disconnect();
    await pool.end();
  }
  return rows;
}

/** One reconciliation, checked: nothing to repair on consistent data. Tracks the largest RSS. */
function measured(repository, size) {
  let peak = 0;
  const measure = () =>
    timed(async () => {
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
      try {
        const report = await reconcileUniqueKeys(repository, { pageSize: PAGE, graceMs: 0 });
        const repaired = report.released + report.restored + report.failed + report.spared;
        if (report.live !== size || repaired !== 0 || report.shared.length + report.heldByOther.length !== 0)
          throw new Error(`reconciliation of consistent data changed something: ${JSON.stringify(report)}`);
        return report.scanned + size;
      } finally {
        clearInterval(sampler);
      }
    });
  measure.peakMb = () => Math.round(peak / 2 ** 20);
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
}

async function redisReservations(redis, pool, keyPrefix, size) {
  for (let at = 0; at < size; at += 10_000) {
    const pipeline = redis.pipeline();
    for (let i = at; i < Math.min(size, at + 10_000); i++)
      pipeline.set(`${keyPrefix}{handle:${handle(i)}}`, `${TTL_FOREVER}|seed|${ownerJson(i)}`);
    await pipeline.exec();
  }
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
  return {
    key,
    floor: async (members) => {
      let records = 0;
      let cursor = null;
      for (;;) {
        const { rows } = await pool.query(
          `SELECT key, value FROM ${table} WHERE name = 'handle' AND ($1::text IS NULL OR key COLLATE "C" > $1) ORDER BY key COLLATE "C" LIMIT $2`,
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

/** Drops what this run wrote: its tables, and its Redis keys (SCAN + UNLINK). */
async function dropEverything(pool, redis, run) {
  const { rows } = await pool.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE $1`, [
    `bench_reconcile_%${run}%`,
  ]);
  for (const { tablename } of rows) await pool.query(`DROP TABLE IF EXISTS "${tablename}"`);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `bench_reconcile_${run}_*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}
