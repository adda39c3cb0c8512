// @ddd-kit/repository on MongoDB: MongooseRepository.update of a loaded aggregate (re-used, so
// its versions advance with every write) beside the raw driver's conditional update doing the
// same work: updateOne({ _id, version }, { $set: fields, $inc: { version: 1 } }).
// The repository adds the id check, the data-sync hook (a snapshot per write) and the version
// bookkeeping; the round trip is the same single updateOne.
// On PostgreSQL: PostgresRepository.update beside pg running the same conditional UPDATE
// (same text, same parameters) on a table of the same shape.
import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import pg from 'pg';
import { AggregateRoot, DataSyncEventBus, MongooseRepository, PostgresRepository } from '@ddd-kit/repository';
import { bestOfAlternating, compare } from './util.js';

class Counter extends AggregateRoot {
  constructor(id, label) {
    super(id);
    this.label = label;
    this.count = 0;
  }
}

class CounterRepository extends MongooseRepository {
  toDocument(counter) {
    return { label: counter.label, count: counter.count };
  }

  toAggregate(document) {
    const counter = new Counter(document._id, document.label);
    counter.count = document.count;
    return counter;
  }
}

const CONCURRENCY = 16;

/**
 * What the repository adds to each update, without I/O: the same update against a collection
 * stub that answers at once, minus the stub call itself. The ratio against the server says how
 * much of a real round trip that is; this says where it comes from.
 */
async function libraryOverheadMicros() {
  const stub = { updateOne: async () => ({ matchedCount: 1 }), insertOne: async () => ({ acknowledged: true }) };
  const repository = new CounterRepository({ collection: 'stub', aggregate: Counter, publisher: new DataSyncEventBus() });
  repository.nativeCollection = stub; // the cached driver collection (see MongooseRepository)
  const counter = new Counter('stub', 'stub');
  await repository.insert(counter);
  const n = 100_000;
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    let start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      counter.count++;
      await repository.update(counter);
    }
    const withRepository = Number(process.hrtime.bigint() - start);
    start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await stub.updateOne({ _id: 'stub', version: i }, { $set: { count: i }, $inc: { version: 1 } });
    best = Math.min(best, (withRepository - Number(process.hrtime.bigint() - start)) / n / 1000);
  }
  return best;
}

/** `writers` loops, each calling `op(itsIndex)` (so each owns one aggregate), for `ms`. */
async function perWriterOpsPerSecond(op, { writers, ms }) {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, index) => {
      while (process.hrtime.bigint() < deadline) {
        await op(index);
        ops++;
      }
    }),
  );
  return ops / (Number(process.hrtime.bigint() - start) / 1e9);
}

export default async function repositoryBench({ log }) {
  return [...(await mongoRows({ log })), ...(await postgresRows({ log }))];
}

async function mongoRows({ log }) {
  const uri = process.env.MONGODB_URI;
  if (!uri) throw new Error('MONGODB_URI is not set (bench/run.js provides it)');
  const connection = await mongoose.createConnection(uri, { dbName: `bench_repository_${randomUUID().slice(0, 8)}` }).asPromise();
  const db = connection.db;
  try {
    // A bus with no handlers, as in an application without @OnDataSync: events are still collected.
    const repository = new CounterRepository({ connection, collection: 'repo_counters', aggregate: Counter, publisher: new DataSyncEventBus() });
    const raw = db.collection('raw_counters');

    // One aggregate per writer; writer 0 is the sequential case.
    const aggregates = [];
    const rawState = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const counter = new Counter(`c${i}`, `counter ${i}`);
      await repository.insert(counter);
      aggregates.push((await repository.findById(counter.id)));
      await raw.insertOne({ _id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
      rawState.push({ id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
    }

    const repositoryUpdate = async (i) => {
      const counter = aggregates[i];
      counter.count++;
      await repository.update(counter);
    };
    const rawUpdate = async (i) => {
      const state = rawState[i];
      state.count++;
      const result = await raw.updateOne({ _id: state.id, version: state.version }, { $set: { label: state.label, count: state.count }, $inc: { version: 1 } });
      if (result.matchedCount !== 1) throw new Error('raw conditional update matched nothing');
      state.version++;
    };

    // Warm both paths (connection pool, JIT, and the server's, which is slow to settle) first.
    const warmUntil = Date.now() + 3000;
    while (Date.now() < warmUntil) {
      await repositoryUpdate(0);
      await rawUpdate(0);
    }

    const sequential = await compare(() => repositoryUpdate(0), () => rawUpdate(0), { ms: 1000, rounds: 6 });
    log(`sequential: repository ${Math.round(sequential.ops)} ops/s, driver ${Math.round(sequential.baselineOps)} ops/s`);

    const concurrent = await bestOfAlternating(
      () => perWriterOpsPerSecond(repositoryUpdate, { writers: CONCURRENCY, ms: 1000 }),
      () => perWriterOpsPerSecond(rawUpdate, { writers: CONCURRENCY, ms: 1000 }),
      { rounds: 6 },
    );
    const overheadUs = await libraryOverheadMicros();
    log(`library work per update (stub collection, no I/O): ${overheadUs.toFixed(1)} µs`);
    log(`${CONCURRENCY} concurrent: repository ${Math.round(concurrent.ops)} ops/s, driver ${Math.round(concurrent.baselineOps)} ops/s`);

    // The writes really happened: stored versions match what each side counted.
    for (let i = 0; i < CONCURRENCY; i++) {
      const stored = await repository.currentVersion(`c${i}`);
      if (stored !== aggregates[i].oldVersion) throw new Error(`repository version ${stored} != ${aggregates[i].oldVersion}`);
    }

    return [
      {
        case: 'mongo update (loaded aggregate, version-conditional)',
        subject: 'MongooseRepository.update',
        ops: sequential.ops,
        baseline: 'driver updateOne({_id, version}, {$set, $inc})',
        baselineOps: sequential.baselineOps,
        target: 0.9,
        note: `one writer, one aggregate re-used; library work ≈ ${overheadUs.toFixed(1)} µs/update (measured on a stub collection)`,
      },
      {
        case: `mongo update, ${CONCURRENCY} writers`,
        subject: 'MongooseRepository.update',
        ops: concurrent.ops,
        baseline: 'driver updateOne({_id, version}, {$set, $inc})',
        baselineOps: concurrent.baselineOps,
        target: 0.9,
        note: `${CONCURRENCY} aggregates, one per writer (no conflicts)`,
      },
    ];
  } finally {
    // The test server (an emulator) has no drop commands: empty the collections instead.
    await db.collection('repo_counters').deleteMany({}).catch(() => undefined);
    await db.collection('raw_counters').deleteMany({}).catch(() => undefined);
    await connection.close();
  }
}

// ---------------------------------------------------------------- PostgreSQL

class CounterRows extends PostgresRepository {
  table = 'repo_counters';
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

/**
 * Subject and baseline in many short alternating slices, each side's rate averaged over all of
 * its slices: on a machine shared with other work, both sides then meet the same disturbances,
 * where a best-of-few-seconds keeps whichever side was lucky.
 */
async function interleaved(measureSubject, measureBaseline, { slices = 30, sliceMs = 150 } = {}) {
  let ops = 0;
  let baselineOps = 0;
  for (let i = 0; i < slices; i++) {
    if (i % 2 === 0) {
      baselineOps += await measureBaseline(sliceMs);
      ops += await measureSubject(sliceMs);
    } else {
      ops += await measureSubject(sliceMs);
      baselineOps += await measureBaseline(sliceMs);
    }
  }
  return { ops: ops / slices, baselineOps: baselineOps / slices };
}

/** What PostgresRepository adds to each update, without I/O: the same update on a pool stub that answers at once, minus the stub call. */
async function postgresLibraryOverheadMicros() {
  const answer = { rowCount: 1, rows: [] };
  const stub = { query: async () => answer, connect: async () => { throw new Error('unused'); } };
  const repository = new CounterRows({ pool: stub, createTable: false, aggregate: Counter, publisher: new DataSyncEventBus() });
  const counter = new Counter('stub', 'stub');
  await repository.insert(counter);
  const n = 100_000;
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    let start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      counter.count++;
      await repository.update(counter);
    }
    const withRepository = Number(process.hrtime.bigint() - start);
    start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await stub.query('UPDATE', ['stub', i, 'stub', i, i + 1]);
    best = Math.min(best, (withRepository - Number(process.hrtime.bigint() - start)) / n / 1000);
  }
  return best;
}

async function postgresRows({ log }) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set (bench/run.js provides it)');
  // synchronous_commit off on both sides: each autocommit would otherwise wait for a WAL flush,
  // whose time on a shared machine swings far more than anything measured here; without it
  // the round trip is shorter, so the library's own work weighs more in the ratio, not less.
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY, options: '-c synchronous_commit=off' });
  try {
    const repository = new CounterRows({ pool, aggregate: Counter, publisher: new DataSyncEventBus() });
    await repository.ensureTable();
    // The raw side: a table of the same shape, and the statement the repository sends, verbatim but for the table.
    await pool.query(repository.createTableStatement().replace('"repo_counters"', '"raw_counters"'));
    const rawUpdateSql = 'UPDATE "raw_counters" SET "label" = $3, "count" = $4, "version" = $5 WHERE "id" = $1 AND "version" = $2';

    const aggregates = [];
    const rawState = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const counter = new Counter(`c${i}`, `counter ${i}`);
      await repository.insert(counter);
      aggregates.push(await repository.findById(counter.id));
      await pool.query('INSERT INTO "raw_counters" ("id", "version", "label", "count") VALUES ($1, 1, $2, 0)', [`c${i}`, `counter ${i}`]);
      rawState.push({ id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
    }

    const repositoryUpdate = async (i) => {
      const counter = aggregates[i];
      counter.count++;
      await repository.update(counter);
    };
    const rawUpdate = async (i) => {
      const state = rawState[i];
      state.count++;
      const result = await pool.query(rawUpdateSql, [state.id, state.version, state.label, state.count, state.version + 1]);
      if (result.rowCount !== 1) throw new Error('raw conditional UPDATE matched nothing');
      state.version++;
    };

    // A/A: the raw UPDATE against itself, on the table of the repository's twin rows: what the
    // ratio shows when nothing differs is the resolution of the two ratios below.
    await pool.query(repository.createTableStatement().replace('"repo_counters"', '"raw_twins"'));
    await pool.query('INSERT INTO "raw_twins" SELECT * FROM "raw_counters"');
    const twinState = rawState.map((state) => ({ ...state }));
    const twinUpdate = async (i) => {
      const state = twinState[i];
      state.count++;
      const result = await pool.query(rawUpdateSql.replace('"raw_counters"', '"raw_twins"'), [state.id, state.version, state.label, state.count, state.version + 1]);
      if (result.rowCount !== 1) throw new Error('twin conditional UPDATE matched nothing');
      state.version++;
    };

    const warmUntil = Date.now() + 3000;
    while (Date.now() < warmUntil) {
      await repositoryUpdate(0);
      await rawUpdate(0);
      await twinUpdate(0);
    }

    const sequential = await interleaved(
      (ms) => perWriterOpsPerSecond(repositoryUpdate, { writers: 1, ms }),
      (ms) => perWriterOpsPerSecond(rawUpdate, { writers: 1, ms }),
    );
    log(`postgres sequential: repository ${Math.round(sequential.ops)} ops/s, pg ${Math.round(sequential.baselineOps)} ops/s`);
    const concurrent = await interleaved(
      (ms) => perWriterOpsPerSecond(repositoryUpdate, { writers: CONCURRENCY, ms }),
      (ms) => perWriterOpsPerSecond(rawUpdate, { writers: CONCURRENCY, ms }),
    );
    log(`postgres ${CONCURRENCY} concurrent: repository ${Math.round(concurrent.ops)} ops/s, pg ${Math.round(concurrent.baselineOps)} ops/s`);
    const control = await interleaved(
      (ms) => perWriterOpsPerSecond(twinUpdate, { writers: 1, ms }),
      (ms) => perWriterOpsPerSecond(rawUpdate, { writers: 1, ms }),
    );
    log(`postgres A/A control: pg ${Math.round(control.ops)} ops/s against pg ${Math.round(control.baselineOps)} ops/s`);
    const overheadUs = await postgresLibraryOverheadMicros();
    log(`postgres library work per update (pool stub, no I/O): ${overheadUs.toFixed(1)} µs`);

    for (let i = 0; i < CONCURRENCY; i++) {
      const stored = await repository.currentVersion(`c${i}`);
      if (stored !== aggregates[i].oldVersion) throw new Error(`repository version ${stored} != ${aggregates[i].oldVersion}`);
      const raw = await pool.query('SELECT version FROM "raw_counters" WHERE id = $1', [`c${i}`]);
      if (Number(raw.rows[0].version) !== rawState[i].version) throw new Error(`raw version ${raw.rows[0].version} != ${rawState[i].version}`);
    }

    return [
      {
        case: 'postgres update (loaded aggregate, version-conditional)',
        subject: 'PostgresRepository.update',
        ops: sequential.ops,
        baseline: 'pg: the same UPDATE … WHERE id = $1 AND version = $2',
        baselineOps: sequential.baselineOps,
        target: 0.95,
        note: `one writer, one aggregate re-used, autocommit (synchronous_commit off, both sides), 30 alternating slices; library work ≈ ${overheadUs.toFixed(1)} µs/update (measured on a pool stub)`,
      },
      {
        case: `postgres update, ${CONCURRENCY} writers`,
        subject: 'PostgresRepository.update',
        ops: concurrent.ops,
        baseline: 'pg: the same UPDATE … WHERE id = $1 AND version = $2',
        baselineOps: concurrent.baselineOps,
        target: 0.95,
        note: `${CONCURRENCY} aggregates, one per writer (no conflicts), pool of ${CONCURRENCY}, synchronous_commit off, 30 alternating slices`,
      },
      {
        case: 'postgres A/A control (resolution of the two rows above)',
        subject: 'pg: the same UPDATE, another table',
        ops: control.ops,
        baseline: 'pg: the same UPDATE … WHERE id = $1 AND version = $2',
        baselineOps: control.baselineOps,
        note: 'nothing differs but the table: any distance from 1.00× is measurement noise',
      },
    ];
  } finally {
    await pool.query('DROP TABLE IF EXISTS "repo_counters", "raw_counters", "raw_twins"').catch(() => undefined);
    await pool.end();
  }
}
