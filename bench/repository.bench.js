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
import { alternate, cpuNote, measureBatches, notes } from './util.js';

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
const SLICE_MS = 1000;
const PAIRS = 6;

/**
 * What the repository adds to each update, without I/O: the same update against a collection
 * stub that answers at once, minus the stub call itself. The ratio against the server says how
 * much of a real round trip that is; this says where it comes from.
 */
async function libraryOverheadMicros() {
  const stub = { updateOne: async () => ({ matchedCount: 1 }), insertOne: async () => ({ acknowledged: true }) };
  const repository = new CounterRepository({
    collection: 'stub',
    aggregate: Counter,
    publisher: new DataSyncEventBus(),
  });
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
    for (let i = 0; i < n; i++)
      await stub.updateOne({ _id: 'stub', version: i }, { $set: { count: i }, $inc: { version: 1 } });
    best = Math.min(best, (withRepository - Number(process.hrtime.bigint() - start)) / n / 1000);
  }
  return best;
}

/** `writers` loops, each calling `op(itsIndex)` (so each owns one aggregate), for `ms`. */
async function perWriterOpsPerSecond(op, { writers, ms }) {
  const cpu = process.cpuUsage();
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
  const used = process.cpuUsage(cpu);
  return {
    opsPerSec: ops / (Number(process.hrtime.bigint() - start) / 1e9),
    cpuUsPerOp: (used.user + used.system) / ops,
  };
}

export default async function repositoryBench({ log }) {
  return [...(await mongoRows({ log })), ...(await postgresRows({ log }))];
}

async function mongoRows({ log }) {
  const uri = process.env.MONGODB_URI;
  if (!uri) throw new Error('MONGODB_URI is not set (bench/run.js provides it)');
  const connection = await mongoose
    .createConnection(uri, { dbName: `bench_repository_${randomUUID().slice(0, 8)}` })
    .asPromise();
  const db = connection.db;
  const label = (process.env.DDD_KIT_MONGODB_URI_SOURCE ?? '').includes('jongodb')
    ? 'MongoDB-wire emulator (jongodb)'
    : 'MongoDB';
  try {
    // A bus with no handlers, as in an application without @OnDataSync: events are still collected.
    const repository = new CounterRepository({
      connection,
      collection: 'repo_counters',
      aggregate: Counter,
      publisher: new DataSyncEventBus(),
    });
    const raw = db.collection('raw_counters');

    // One aggregate per writer; writer 0 is the sequential case.
    const aggregates = [];
    const rawState = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const counter = new Counter(`c${i}`, `counter ${i}`);
      await repository.insert(counter);
      aggregates.push(await repository.findById(counter.id));
      await raw.insertOne({ _id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
      rawState.push({ id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
    }

    // Each update is checked: the repository throws OptimisticLockError when its conditional
    // write matched nothing, and advances the aggregate's version when it matched.
    const repositoryUpdate = async (i) => {
      const counter = aggregates[i];
      const before = counter.oldVersion;
      counter.count++;
      await repository.update(counter);
      if (counter.oldVersion !== before + 1)
        throw new Error(`repository update left version ${counter.oldVersion} after ${before}`);
    };
    const rawUpdate = async (i) => {
      const state = rawState[i];
      state.count++;
      const result = await raw.updateOne(
        { _id: state.id, version: state.version },
        { $set: { label: state.label, count: state.count }, $inc: { version: 1 } },
      );
      if (result.matchedCount !== 1) throw new Error('raw conditional update matched nothing');
      state.version++;
    };

    // Warm both paths (connection pool, JIT, and the server's, which is slow to settle) first.
    const warmUntil = Date.now() + 3000;
    while (Date.now() < warmUntil) {
      await repositoryUpdate(0);
      await rawUpdate(0);
    }

    const one = (update) => () => measureBatches(async () => (await update(0), 1), { ms: SLICE_MS });
    const sequential = await alternate(one(repositoryUpdate), one(rawUpdate), { pairs: PAIRS });
    log(
      `sequential: repository ${Math.round(sequential.ops)} ops/s, driver ${Math.round(sequential.baselineOps)} ops/s`,
    );

    const concurrent = await alternate(
      () => perWriterOpsPerSecond(repositoryUpdate, { writers: CONCURRENCY, ms: SLICE_MS }),
      () => perWriterOpsPerSecond(rawUpdate, { writers: CONCURRENCY, ms: SLICE_MS }),
      { pairs: PAIRS },
    );
    const overheadUs = await libraryOverheadMicros();
    log(`library work per update (stub collection, no I/O): ${overheadUs.toFixed(1)} µs`);
    log(
      `${CONCURRENCY} concurrent: repository ${Math.round(concurrent.ops)} ops/s, driver ${Math.round(concurrent.baselineOps)} ops/s`,
    );

    // The writes really happened: stored versions match what each side counted.
    for (let i = 0; i < CONCURRENCY; i++) {
      const stored = await repository.currentVersion(`c${i}`);
      if (stored !== aggregates[i].oldVersion)
        throw new Error(`repository version ${stored} != ${aggregates[i].oldVersion}`);
    }

    return [
      {
        case: `${label} update (loaded aggregate, version-conditional)`,
        subject: 'MongooseRepository.update',
        baseline: 'driver updateOne({_id, version}, {$set, $inc})',
        ...sequential,
        target: 0.9,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs, after 3 s of warm-up; one writer, one aggregate re-used`,
        note: notes(
          'every update checked (version advanced / matched one document)',
          `library work ≈ ${overheadUs.toFixed(1)} µs/update (measured on a stub collection)`,
          cpuNote(sequential),
        ),
      },
      {
        case: `${label} update, ${CONCURRENCY} writers`,
        subject: 'MongooseRepository.update',
        baseline: 'driver updateOne({_id, version}, {$set, $inc})',
        ...concurrent,
        target: 0.9,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${CONCURRENCY} aggregates, one per writer (no conflicts)`,
        note: notes('every update checked (version advanced / matched one document)', cpuNote(concurrent)),
      },
    ];
  } finally {
    // The test server (an emulator) has no drop commands: empty the collections instead.
    await db
      .collection('repo_counters')
      .deleteMany({})
      .catch(() => undefined);
    await db
      .collection('raw_counters')
      .deleteMany({})
      .catch(() => undefined);
    await connection.close();
  }
}

// ---------------------------------------------------------------- PostgreSQL

// Shorter slices, more pairs: a PostgreSQL round trip is short, and many adjacent pairs keep
// a passing disturbance of the shared machine out of the median.
const PG_SLICE_MS = 250;
const PG_PAIRS = 24;

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

/** What PostgresRepository adds to each update, without I/O: the same update on a pool stub that answers at once, minus the stub call. */
async function postgresLibraryOverheadMicros() {
  const answer = { rowCount: 1, rows: [] };
  const stub = {
    query: async () => answer,
    connect: async () => {
      throw new Error('unused');
    },
  };
  const repository = new CounterRows({
    pool: stub,
    createTable: false,
    aggregate: Counter,
    publisher: new DataSyncEventBus(),
  });
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
  // synchronous_commit off on every side: each autocommit would otherwise wait for a WAL
  // flush, whose time on a shared machine swings far more than anything measured here;
  // without it the round trip is shorter, so the library's own work weighs more in the ratio.
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY, options: '-c synchronous_commit=off' });
  try {
    const repository = new CounterRows({ pool, aggregate: Counter, publisher: new DataSyncEventBus() });
    await repository.ensureTable();
    // The raw side (and its A/A twin): tables of the same shape, and the statement the
    // repository sends, verbatim but for the table.
    const ddl = repository.createTableStatement();
    await pool.query(ddl.replace('"repo_counters"', '"raw_counters"'));
    await pool.query(ddl.replace('"repo_counters"', '"raw_twins"'));
    const updateSql = (table) =>
      `UPDATE "${table}" SET "label" = $3, "count" = $4, "version" = $5 WHERE "id" = $1 AND "version" = $2`;

    const aggregates = [];
    const raw = { raw_counters: [], raw_twins: [] };
    for (let i = 0; i < CONCURRENCY; i++) {
      const counter = new Counter(`c${i}`, `counter ${i}`);
      await repository.insert(counter);
      aggregates.push(await repository.findById(counter.id));
      for (const table of Object.keys(raw)) {
        await pool.query(`INSERT INTO "${table}" ("id", "version", "label", "count") VALUES ($1, 1, $2, 0)`, [
          `c${i}`,
          `counter ${i}`,
        ]);
        raw[table].push({ id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
      }
    }

    // Every update checked: the repository throws OptimisticLockError when its conditional
    // UPDATE matched nothing and advances the version when it matched; the raw side checks rowCount.
    const repositoryUpdate = async (i) => {
      const counter = aggregates[i];
      const before = counter.oldVersion;
      counter.count++;
      await repository.update(counter);
      if (counter.oldVersion !== before + 1)
        throw new Error(`repository update left version ${counter.oldVersion} after ${before}`);
    };
    const rawUpdateOn = (table) => async (i) => {
      const state = raw[table][i];
      state.count++;
      const result = await pool.query(updateSql(table), [
        state.id,
        state.version,
        state.label,
        state.count,
        state.version + 1,
      ]);
      if (result.rowCount !== 1) throw new Error(`raw conditional UPDATE on ${table} matched nothing`);
      state.version++;
    };
    const rawUpdate = rawUpdateOn('raw_counters');
    const twinUpdate = rawUpdateOn('raw_twins');

    const warmUntil = Date.now() + 3000;
    while (Date.now() < warmUntil) {
      await repositoryUpdate(0);
      await rawUpdate(0);
      await twinUpdate(0);
    }

    const one = (update) => () => measureBatches(async () => (await update(0), 1), { ms: PG_SLICE_MS });
    const sequential = await alternate(one(repositoryUpdate), one(rawUpdate), { pairs: PG_PAIRS });
    log(
      `postgres sequential: repository ${Math.round(sequential.ops)} ops/s, pg ${Math.round(sequential.baselineOps)} ops/s`,
    );
    const concurrent = await alternate(
      () => perWriterOpsPerSecond(repositoryUpdate, { writers: CONCURRENCY, ms: PG_SLICE_MS }),
      () => perWriterOpsPerSecond(rawUpdate, { writers: CONCURRENCY, ms: PG_SLICE_MS }),
      { pairs: PG_PAIRS },
    );
    log(
      `postgres ${CONCURRENCY} concurrent: repository ${Math.round(concurrent.ops)} ops/s, pg ${Math.round(concurrent.baselineOps)} ops/s`,
    );
    // A/A: the same raw UPDATE on two tables. Its distance from 1.00× is what the rows above cannot resolve.
    const control = await alternate(one(twinUpdate), one(rawUpdate), { pairs: PG_PAIRS });
    log(
      `postgres A/A control: pg ${Math.round(control.ops)} ops/s against pg ${Math.round(control.baselineOps)} ops/s`,
    );
    const overheadUs = await postgresLibraryOverheadMicros();
    log(`postgres library work per update (pool stub, no I/O): ${overheadUs.toFixed(1)} µs`);

    for (let i = 0; i < CONCURRENCY; i++) {
      const stored = await repository.currentVersion(`c${i}`);
      if (stored !== aggregates[i].oldVersion)
        throw new Error(`repository version ${stored} != ${aggregates[i].oldVersion}`);
      for (const table of Object.keys(raw)) {
        const { rows } = await pool.query(`SELECT version FROM "${table}" WHERE id = $1`, [`c${i}`]);
        if (Number(rows[0].version) !== raw[table][i].version)
          throw new Error(`${table} version ${rows[0].version} != ${raw[table][i].version}`);
      }
    }

    const baseline = 'pg: the same UPDATE … WHERE id = $1 AND version = $2';
    const server = 'PostgreSQL, synchronous_commit off on both sides';
    return [
      {
        case: 'PostgreSQL update (loaded aggregate, version-conditional)',
        subject: 'PostgresRepository.update',
        baseline,
        ...sequential,
        target: 0.95,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs, after 3 s of warm-up; one writer, one aggregate re-used, autocommit; ${server}`,
        note: notes(
          'every update checked (version advanced / one row matched)',
          `library work ≈ ${overheadUs.toFixed(1)} µs/update (measured on a pool stub)`,
          cpuNote(sequential),
        ),
      },
      {
        case: `PostgreSQL update, ${CONCURRENCY} writers`,
        subject: 'PostgresRepository.update',
        baseline,
        ...concurrent,
        target: 0.95,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; ${CONCURRENCY} aggregates, one per writer (no conflicts), a pool of ${CONCURRENCY}; ${server}`,
        note: notes('every update checked (version advanced / one row matched)', cpuNote(concurrent)),
      },
      {
        case: 'PostgreSQL A/A control (the resolution of the two rows above)',
        subject: 'pg: the same UPDATE on a twin table',
        baseline,
        ...control,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; one writer; ${server}`,
        note: notes('nothing differs but the table: any distance from 1.00× is measurement noise', cpuNote(control)),
      },
    ];
  } finally {
    await pool.query('DROP TABLE IF EXISTS "repo_counters", "raw_counters", "raw_twins"').catch(() => undefined);
    await pool.end();
  }
}
