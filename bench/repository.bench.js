// @ddd-kit/repository on MongoDB: MongooseRepository.update of a loaded aggregate (re-used, so
// its versions advance with every write) beside the raw driver's conditional update doing the
// same work: updateOne({ _id, version }, { $set: fields, $inc: { version: 1 } }).
// The repository adds the id check, the data-sync hook (a snapshot per write) and the version
// bookkeeping; the round trip is the same single updateOne.
// On PostgreSQL, in both commit modes (synchronous_commit off, and on as by default):
// - PostgresRepository.update beside pg running the same conditional UPDATE (same text, same
//   parameters, prepared as the repository's statements are) on a table of the same shape, and
//   A/A controls with one writer and with 16;
// - load + version-checked update, 16 writers: findById then update, beside raw pg (the same
//   SELECT and UPDATE, prepared) and the ORMs a user would pick instead, MikroORM and TypeORM
//   (bench/peers/orms.js says what each one sends and checks).
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import mongoose from 'mongoose';
import { DataSyncEventBus, MongooseRepository, PostgresRepository } from '@ddd-kit/repository';
import { Counter } from './outbox-support.js';
import { mikroOrmSide, typeOrmSide } from './peers/orms.js';
import { COMMIT_MODES, serverFacts, benchPool, dropBenchTables } from './postgres.js';
import { alternate, cpuNote, measureBatches, notes, pairsOf, perWriterOpsPerSecond, sliceMs } from './util.js';

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
const WARM_MS = sliceMs(3000);
const SLICE_MS = sliceMs(250);
const PAIRS = pairsOf(24);

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
    // The raw side, and its A/A twin: a collection of its own, the same documents and updates.
    const collections = { raw_counters: db.collection('raw_counters'), raw_twins: db.collection('raw_twins') };

    // One aggregate per writer; writer 0 is the sequential case.
    const aggregates = [];
    const rawState = { raw_counters: [], raw_twins: [] };
    for (let i = 0; i < CONCURRENCY; i++) {
      const counter = new Counter(`c${i}`, `counter ${i}`);
      await repository.insert(counter);
      aggregates.push(await repository.findById(counter.id));
      for (const [name, collection] of Object.entries(collections)) {
        await collection.insertOne({ _id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
        rawState[name].push({ id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
      }
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
    const rawUpdateOn = (name) => async (i) => {
      const state = rawState[name][i];
      state.count++;
      const result = await collections[name].updateOne(
        { _id: state.id, version: state.version },
        { $set: { label: state.label, count: state.count }, $inc: { version: 1 } },
      );
      if (result.matchedCount !== 1) throw new Error(`raw conditional update on ${name} matched nothing`);
      state.version++;
    };
    const rawUpdate = rawUpdateOn('raw_counters');
    const twinUpdate = rawUpdateOn('raw_twins');

    // Warm both paths (connection pool, JIT, and the server's, which is slow to settle) first.
    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) {
      await repositoryUpdate(0);
      await rawUpdate(0);
    }

    const one = (update) => () => measureBatches(async () => (await update(0), 1), { ms: SLICE_MS });
    const sequential = await alternate(one(repositoryUpdate), one(rawUpdate), { pairs: PAIRS });
    log(
      `sequential: repository ${Math.round(sequential.ops)} ops/s, driver ${Math.round(sequential.baselineOps)} ops/s`,
    );

    const writers = (update) => () => perWriterOpsPerSecond(update, { writers: CONCURRENCY, ms: SLICE_MS });
    const concurrent = await alternate(writers(repositoryUpdate), writers(rawUpdate), { pairs: PAIRS });
    // A/A: the same driver update on two collections. Its distance from 1.00× is what the row above cannot resolve.
    const controlWriters = await alternate(writers(twinUpdate), writers(rawUpdate), { pairs: PAIRS });
    const overheadUs = await libraryOverheadMicros();
    log(`library work per update (stub collection, no I/O): ${overheadUs.toFixed(1)} µs`);
    log(
      `${CONCURRENCY} concurrent: repository ${Math.round(concurrent.ops)} ops/s, driver ${Math.round(concurrent.baselineOps)} ops/s`,
    );
    log(
      `${CONCURRENCY} concurrent, A/A control: driver ${Math.round(controlWriters.ops)} ops/s against driver ${Math.round(controlWriters.baselineOps)} ops/s`,
    );

    // The writes really happened: stored versions match what each side counted.
    for (let i = 0; i < CONCURRENCY; i++) {
      const stored = await repository.currentVersion(`c${i}`);
      if (stored !== aggregates[i].oldVersion)
        throw new Error(`repository version ${stored} != ${aggregates[i].oldVersion}`);
      for (const [name, collection] of Object.entries(collections)) {
        const found = await collection.findOne({ _id: `c${i}` });
        if (found?.version !== rawState[name][i].version)
          throw new Error(`${name} version ${found?.version} != ${rawState[name][i].version}`);
      }
    }

    return [
      {
        case: `${label} update (loaded aggregate, version-conditional)`,
        subject: 'MongooseRepository.update',
        baseline: 'driver updateOne({_id, version}, {$set, $inc})',
        ...sequential,
        target: 0.9,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs, after ${WARM_MS / 1000} s of warm-up; one writer, one aggregate re-used`,
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
        control: { interval: controlWriters.interval },
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${CONCURRENCY} aggregates, one per writer (no conflicts)`,
        note: notes('every update checked (version advanced / matched one document)', cpuNote(concurrent)),
      },
      {
        case: `${label} A/A control, ${CONCURRENCY} writers (the resolution of the row above)`,
        subject: 'driver updateOne on a twin collection',
        baseline: 'driver updateOne({_id, version}, {$set, $inc})',
        ...controlWriters,
        settings: `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; ${CONCURRENCY} writers, a document each`,
        note: notes(
          'nothing differs but the collection: any distance from 1.00× is measurement noise',
          cpuNote(controlWriters),
        ),
      },
    ];
  } finally {
    // The test server (an emulator) has no drop commands: empty the collections instead.
    await db
      .collection('repo_counters')
      .deleteMany({})
      .catch(() => undefined);
    for (const name of ['raw_counters', 'raw_twins'])
      await db
        .collection(name)
        .deleteMany({})
        .catch(() => undefined);
    await connection.close();
  }
}

// ---------------------------------------------------------------- PostgreSQL

// Short slices, many pairs: what disturbs a row on this shared machine comes in bursts (a
// checkpoint, a GC, another process), which in a short slice spoil a few pair ratios that the
// median leaves out, and in a long one move every pair they overlap. Against the ORMs, whose
// ratios are far from 1 and who do a few hundred loads a second, longer slices and fewer pairs.
const PG_SLICE_MS = sliceMs(100);
const PG_PAIRS = pairsOf(60);
const ORM_SLICE_MS = sliceMs(250);
const ORM_PAIRS = pairsOf(16);
/** The targets for a load + version-checked update: raw pg, and MikroORM. */
const RAW_TARGET = 0.95;
const MIKRO_ORM_TARGET = 3;

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
  // The table check before the first statement (on a connection of its own) sees the table and its columns.
  const columns = ['id', 'version', 'label', 'count'].map((attname) => ({ attname }));
  // pg takes a statement as text or as { text, values }.
  const check = async (sql) => {
    const text = typeof sql === 'string' ? sql : sql.text;
    return text.includes('attname')
      ? { rowCount: columns.length, rows: columns }
      : text.includes('to_regclass')
        ? { rowCount: 1, rows: [{ present: true }] }
        : answer;
  };
  // The table check runs on a connection of its own made from the pool's Client class and
  // options, as with a pg.Pool. (Without them it would run in a transaction on a pooled
  // connection, and the AsyncLocalStorage that publishes it would switch async hooks on for the
  // rest of this process on Node 20, slowing every promise of every row after it.)
  class StubClient extends EventEmitter {
    connect = async () => undefined;
    end = async () => undefined;
    query = check;
  }
  const stub = {
    query: async () => answer,
    connect: async () => Object.assign(new EventEmitter(), { query: check, release: () => undefined }),
    Client: StubClient,
    options: {},
  };
  const repository = new CounterRows({
    pool: stub,
    createTables: false,
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
  const overheadUs = await postgresLibraryOverheadMicros();
  log(`postgres library work per update (pool stub, no I/O): ${overheadUs.toFixed(1)} µs`);
  const rows = [];
  for (const mode of COMMIT_MODES) rows.push(...(await postgresRowsIn(mode, { url, overheadUs, log, orms: false })));
  // The ORMs last: MikroORM's flush runs in an AsyncLocalStorage, which switches async hooks on
  // for the rest of the process on Node 20 (every promise after it costs more, on both sides).
  for (const mode of COMMIT_MODES) rows.push(...(await postgresRowsIn(mode, { url, overheadUs, log, orms: true })));
  return rows;
}

/** The PostgreSQL rows of one commit mode (against raw pg, or with `orms` against the ORMs), all sides' connections set alike. */
async function postgresRowsIn(mode, { url, overheadUs, log, orms }) {
  const pool = benchPool({ connectionString: url, max: CONCURRENCY, options: mode.options });
  const tables = ['repo_counters', 'raw_counters', 'raw_twins'];
  try {
    const server = `${await serverFacts(pool)}, ${mode.label} on every side`;
    const repository = new CounterRows({ pool, aggregate: Counter, publisher: new DataSyncEventBus() });
    await dropBenchTables(pool, tables);
    await repository.ensureTable();
    // The raw side (and its A/A twin): tables of the same shape, and the statement the
    // repository sends, verbatim but for the table.
    const ddl = repository.createTableStatement();
    const ddlFor = (table) => ddl.replace('"repo_counters"', `"${table}"`);
    await pool.query(ddlFor('raw_counters'));
    await pool.query(ddlFor('raw_twins'));
    const updateSql = (table) =>
      `UPDATE "${table}" SET "label" = $3, "count" = $4, "version" = $5 WHERE "id" = $1 AND "version" = $2`;

    // Rows c<i>: updated from an aggregate loaded once; rows l<i>: loaded before each update.
    const aggregates = [];
    const raw = { raw_counters: [], raw_twins: [] };
    for (let i = 0; i < CONCURRENCY; i++) {
      for (const id of [`c${i}`, `l${i}`]) {
        await repository.insert(new Counter(id, `counter ${i}`));
        for (const table of Object.keys(raw))
          await pool.query(`INSERT INTO "${table}" ("id", "version", "label", "count") VALUES ($1, 1, $2, 0)`, [
            id,
            `counter ${i}`,
          ]);
      }
      aggregates.push(await repository.findById(`c${i}`));
      for (const table of Object.keys(raw))
        raw[table].push({ id: `c${i}`, label: `counter ${i}`, count: 0, version: 1 });
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
      const result = await pool.query({
        name: `bench_raw_update_${table}`,
        text: updateSql(table),
        values: [state.id, state.version, state.label, state.count, state.version + 1],
      });
      if (result.rowCount !== 1) throw new Error(`raw conditional UPDATE on ${table} matched nothing`);
      state.version++;
    };
    const rawUpdate = rawUpdateOn('raw_counters');
    const twinUpdate = rawUpdateOn('raw_twins');

    // Load + update: the repository's findById and update; raw pg sending the same SELECT and UPDATE.
    const loadUpdates = { repository: new Array(CONCURRENCY).fill(0), raw: new Array(CONCURRENCY).fill(0) };
    const repositoryLoadUpdate = async (i) => {
      const counter = await repository.findById(`l${i}`);
      const before = counter.oldVersion;
      counter.count++;
      await repository.update(counter);
      if (counter.oldVersion !== before + 1)
        throw new Error(`repository update left version ${counter.oldVersion} after ${before}`);
      loadUpdates.repository[i]++;
    };
    const findSql = `SELECT "id" AS "id", "version" AS "version", "label", "count" FROM "raw_counters" WHERE "id" = $1`;
    const rawLoadUpdate = async (i) => {
      const { rows: found } = await pool.query({ name: 'bench_raw_find', text: findSql, values: [`l${i}`] });
      const row = found[0];
      const version = Number(row.version);
      const result = await pool.query({
        name: 'bench_raw_update_raw_counters',
        text: updateSql('raw_counters'),
        values: [row.id, version, row.label, row.count + 1, version + 1],
      });
      if (result.rowCount !== 1) throw new Error('raw load + conditional UPDATE matched nothing');
      loadUpdates.raw[i]++;
    };

    // Every row ends at the version its side's count of updates says.
    const verify = async () => {
      for (let i = 0; i < CONCURRENCY; i++) {
        const stored = await repository.currentVersion(`c${i}`);
        if (stored !== aggregates[i].oldVersion)
          throw new Error(`repository version ${stored} != ${aggregates[i].oldVersion}`);
        const storedLoaded = await repository.currentVersion(`l${i}`);
        if (storedLoaded !== 1 + loadUpdates.repository[i])
          throw new Error(`repository l${i}: version ${storedLoaded} after ${loadUpdates.repository[i]} updates`);
        for (const table of Object.keys(raw)) {
          const { rows: found } = await pool.query(`SELECT version FROM "${table}" WHERE id = $1`, [`c${i}`]);
          if (Number(found[0].version) !== raw[table][i].version)
            throw new Error(`${table} version ${found[0].version} != ${raw[table][i].version}`);
        }
        const { rows: found } = await pool.query(`SELECT version, count FROM "raw_counters" WHERE id = $1`, [`l${i}`]);
        if (Number(found[0].version) !== 1 + loadUpdates.raw[i] || found[0].count !== loadUpdates.raw[i])
          throw new Error(`raw_counters l${i}: version ${found[0].version} after ${loadUpdates.raw[i]} updates`);
      }
    };

    if (orms) {
      const ormRows = await ormComparisons(mode, { url, pool, ddlFor, server, repositoryLoadUpdate, log });
      await verify();
      return ormRows;
    }

    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) {
      await repositoryUpdate(0);
      await rawUpdate(0);
      await twinUpdate(0);
      await repositoryLoadUpdate(0);
      await rawLoadUpdate(0);
    }

    const one = (update) => () => measureBatches(async () => (await update(0), 1), { ms: PG_SLICE_MS });
    const writers = (update) => () => perWriterOpsPerSecond(update, { writers: CONCURRENCY, ms: PG_SLICE_MS });
    const sequential = await alternate(one(repositoryUpdate), one(rawUpdate), { pairs: PG_PAIRS });
    log(
      `postgres ${mode.label}, sequential: repository ${Math.round(sequential.ops)} ops/s, pg ${Math.round(sequential.baselineOps)} ops/s`,
    );
    const concurrent = await alternate(writers(repositoryUpdate), writers(rawUpdate), { pairs: PG_PAIRS });
    log(
      `postgres ${mode.label}, ${CONCURRENCY} writers: repository ${Math.round(concurrent.ops)} ops/s, pg ${Math.round(concurrent.baselineOps)} ops/s`,
    );
    // A/A: the same raw UPDATE on two tables. Its distance from 1.00× is what the rows above cannot resolve.
    const control = await alternate(one(twinUpdate), one(rawUpdate), { pairs: PG_PAIRS });
    log(
      `postgres ${mode.label}, A/A control: pg ${Math.round(control.ops)} ops/s against pg ${Math.round(control.baselineOps)} ops/s`,
    );
    const controlWriters = await alternate(writers(twinUpdate), writers(rawUpdate), { pairs: PG_PAIRS });
    log(
      `postgres ${mode.label}, A/A control, ${CONCURRENCY} writers: pg ${Math.round(controlWriters.ops)} ops/s against pg ${Math.round(controlWriters.baselineOps)} ops/s`,
    );
    const loaded = await alternate(writers(repositoryLoadUpdate), writers(rawLoadUpdate), { pairs: PG_PAIRS });
    log(
      `postgres ${mode.label}, load + update, ${CONCURRENCY} writers: repository ${Math.round(loaded.ops)} ops/s, pg ${Math.round(loaded.baselineOps)} ops/s`,
    );
    await verify();

    // Prepared, as the repository's own statements are: the rows measure the library, not the protocol.
    const baseline = 'pg: the same UPDATE … WHERE id = $1 AND version = $2, prepared';
    const suffix = `, ${mode.label}`;
    return [
      {
        case: `PostgreSQL update (loaded aggregate, version-conditional)${suffix}`,
        subject: 'PostgresRepository.update',
        baseline,
        ...sequential,
        target: RAW_TARGET,
        control: { interval: control.interval },
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs, after ${WARM_MS / 1000} s of warm-up; one writer, one aggregate re-used, autocommit; ${server}`,
        note: notes(
          'every update checked (version advanced / one row matched)',
          `library work ≈ ${overheadUs.toFixed(1)} µs/update (measured on a pool stub)`,
          cpuNote(sequential),
        ),
      },
      {
        case: `PostgreSQL update, ${CONCURRENCY} writers${suffix}`,
        subject: 'PostgresRepository.update',
        baseline,
        ...concurrent,
        target: RAW_TARGET,
        control: { interval: controlWriters.interval },
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; ${CONCURRENCY} aggregates, one per writer (no conflicts), a pool of ${CONCURRENCY}; ${server}`,
        note: notes('every update checked (version advanced / one row matched)', cpuNote(concurrent)),
      },
      {
        case: `PostgreSQL A/A control, one writer (the resolution of the one-writer row)${suffix}`,
        subject: 'pg: the same UPDATE on a twin table',
        baseline,
        ...control,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; one writer; ${server}`,
        note: notes('nothing differs but the table: any distance from 1.00× is measurement noise', cpuNote(control)),
      },
      {
        case: `PostgreSQL A/A control, ${CONCURRENCY} writers (the resolution of the ${CONCURRENCY}-writer rows)${suffix}`,
        subject: 'pg: the same UPDATE on a twin table',
        baseline,
        ...controlWriters,
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; ${CONCURRENCY} writers, a row each, a pool of ${CONCURRENCY}; ${server}`,
        note: notes(
          'nothing differs but the table: any distance from 1.00× is measurement noise',
          cpuNote(controlWriters),
        ),
      },
      {
        case: `PostgreSQL load + version-checked update, ${CONCURRENCY} writers${suffix}`,
        subject: 'PostgresRepository findById + update',
        baseline: 'pg: the same SELECT, then UPDATE … WHERE id = $1 AND version = $2, both prepared',
        peer: true,
        ...loaded,
        target: RAW_TARGET,
        control: { interval: controlWriters.interval },
        settings: `${PG_SLICE_MS} ms slices, ${PG_PAIRS} alternating pairs; ${CONCURRENCY} writers, each loading and updating a row of its own, a pool of ${CONCURRENCY}; ${server}`,
        note: notes(
          "every update checked (version advanced / one row matched); each row's final version and count are its side's count of updates",
          cpuNote(loaded),
        ),
      },
    ];
  } finally {
    await dropBenchTables(pool, tables).catch(() => undefined);
    await pool.end();
  }
}

/** PostgresRepository's load + update beside MikroORM's and TypeORM's, one alternation each. */
async function ormComparisons(mode, { url, pool, ddlFor, server, repositoryLoadUpdate, log }) {
  const rows = [];
  const peers = [
    {
      name: 'MikroORM',
      make: mikroOrmSide,
      table: 'mikro_orm_counters',
      baseline: 'MikroORM: findOneOrFail, then flush (version: true)',
      target: MIKRO_ORM_TARGET,
      sends:
        'MikroORM sends a SELECT, then BEGIN, UPDATE … WHERE id AND version RETURNING version, COMMIT (flush runs in a transaction)',
    },
    {
      name: 'TypeORM',
      make: typeOrmSide,
      table: 'typeorm_counters',
      baseline: 'TypeORM: findOneBy, then the checked UPDATE … WHERE id AND version (version column)',
      sends: 'TypeORM sends a SELECT, then UPDATE … WHERE id AND version RETURNING version, checked on affected rows',
    },
  ];
  for (const peer of peers) {
    const side = await peer.make({
      url,
      pool,
      ddl: ddlFor,
      table: peer.table,
      writers: CONCURRENCY,
      connectionOptions: mode.options,
    });
    try {
      const warmUntil = Date.now() + WARM_MS;
      while (Date.now() < warmUntil) await side.loadUpdate(0);
      const stale = await side.staleWrite();
      const result = await alternate(
        () => perWriterOpsPerSecond(repositoryLoadUpdate, { writers: CONCURRENCY, ms: ORM_SLICE_MS }),
        () => perWriterOpsPerSecond(side.loadUpdate, { writers: CONCURRENCY, ms: ORM_SLICE_MS }),
        { pairs: ORM_PAIRS },
      );
      await side.verify();
      log(
        `postgres ${mode.label}, load + update, ${CONCURRENCY} writers: repository ${Math.round(result.ops)} ops/s, ${peer.name} ${Math.round(result.baselineOps)} ops/s`,
      );
      rows.push({
        case: `PostgreSQL load + version-checked update against ${peer.name}, ${CONCURRENCY} writers, ${mode.label}`,
        subject: 'PostgresRepository findById + update',
        baseline: peer.baseline,
        peer: true,
        ...result,
        target: peer.target,
        settings: `${ORM_SLICE_MS} ms slices, ${ORM_PAIRS} alternating pairs, the ORM after ${WARM_MS / 1000} s of warm-up; ${CONCURRENCY} writers, each loading and updating a row of its own, a pool of ${CONCURRENCY} per side; same table DDL; ${server}`,
        note: notes(
          "every update checked on both sides (version advanced by one); each row's final version and count are its side's count of updates",
          peer.sends,
          stale,
          cpuNote(result),
        ),
      });
    } finally {
      await side.close();
    }
  }
  return rows;
}
