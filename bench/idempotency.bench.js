// @ddd-kit/idempotency over HTTP: a POST to an @Idempotent() route of a Nest application
// (Express) with a fresh Idempotency-Key each time, beside the same request without the header
// (the route then runs as any other: the interceptor only looks for the header). The difference
// is what a key costs: the fingerprint (canonical JSON of the body, digests) and the store's
// steps — memory; Redis (two scripts: take the key, complete it); PostgreSQL (its own
// transaction: BEGIN, the advisory lock, the row's insert and update, COMMIT). And a repeat of
// one key (a replay) beside the same request without a key.
// Every answer is checked: 201 and the handler's body; with a fresh key, no Idempotent-Replayed
// header; on a repeat, the header and the first body.
import 'reflect-metadata';
import http from 'node:http';
import { Body, Controller, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { benchPool, dropBenchTables } from './postgres.js';
import {
  IdempotencyModule,
  Idempotent,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  RedisIdempotencyStore,
} from '@ddd-kit/idempotency';
import { alternate, cpuNote, freshKeys, measureConcurrent, notes, pairsOf, sliceMs } from './util.js';

const SLICE_MS = sliceMs(1000);
const PAIRS = pairsOf(6);
const CONCURRENCY = 16;
const run = `${Date.now().toString(36)}${process.pid}`;
const body = JSON.stringify({ username: 'alice', profile: { city: 'Lyon', tags: ['a', 'b'] } });

class ThingsController {
  create(received) {
    return { id: 'u-1', username: received.username };
  }
}
Body()(ThingsController.prototype, 'create', 0);
Reflect.decorate(
  [Post('things'), Idempotent()],
  ThingsController.prototype,
  'create',
  Object.getOwnPropertyDescriptor(ThingsController.prototype, 'create'),
);
Reflect.decorate([Controller()], ThingsController);

async function startApp(store) {
  class AppModule {}
  Reflect.decorate(
    [Module({ imports: [IdempotencyModule.forRoot({ store })], controllers: [ThingsController] })],
    AppModule,
  );
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, port: app.getHttpServer().address().port };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** One POST; resolves { status, replayed, body }. */
function post(port, key) {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    if (key !== undefined) headers['idempotency-key'] = `"${key}"`;
    const req = http.request({ host: '127.0.0.1', port, path: '/things', method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: text }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const EXPECTED = JSON.stringify({ id: 'u-1', username: 'alice' });

function check(answer, replayed) {
  if (answer.status !== 201 || answer.body !== EXPECTED)
    throw new Error(`wrong answer: ${answer.status} ${answer.body}`);
  if ((answer.replayed === 'true') !== replayed)
    throw new Error(`Idempotent-Replayed was ${answer.replayed}, expected ${replayed ? 'true' : 'absent'}`);
}

async function rowsFor(label, store, settings) {
  const { app, port } = await startApp(store);
  try {
    const nextKey = freshKeys(`bench-${run}-${label}-`);
    const withKey = () =>
      measureConcurrent(async () => check(await post(port, nextKey()), false), {
        concurrency: CONCURRENCY,
        ms: SLICE_MS,
      });
    const without = () =>
      measureConcurrent(async () => check(await post(port, undefined), false), {
        concurrency: CONCURRENCY,
        ms: SLICE_MS,
      });
    const fresh = await alternate(withKey, without, { pairs: PAIRS });
    const rows = [
      {
        case: `POST with a fresh Idempotency-Key vs without, ${CONCURRENCY} concurrent`,
        subject: `@Idempotent() on ${label}`,
        baseline: 'the same route without the header',
        ...fresh,
        settings,
        note: notes(cpuNote(fresh)),
      },
    ];
    if (label === 'MemoryIdempotencyStore') {
      const repeated = `bench-${run}-repeat`;
      check(await post(port, repeated), false);
      const replay = () =>
        measureConcurrent(async () => check(await post(port, repeated), true), {
          concurrency: CONCURRENCY,
          ms: SLICE_MS,
        });
      const replays = await alternate(replay, without, { pairs: PAIRS });
      rows.push({
        case: `POST repeating one Idempotency-Key (a replay) vs without, ${CONCURRENCY} concurrent`,
        subject: `@Idempotent() on ${label}`,
        baseline: 'the same route without the header',
        ...replays,
        settings,
        note: notes(cpuNote(replays)),
      });
    }
    return rows;
  } finally {
    await app.close();
  }
}

export default async function bench({ log }) {
  const rows = [];
  rows.push(...(await rowsFor('MemoryIdempotencyStore', new MemoryIdempotencyStore(), 'Express, keep-alive')));

  const redis = new Redis(process.env.REDIS_URL);
  try {
    const store = new RedisIdempotencyStore(redis, { keyPrefix: `bench:${run}:idem:`, ttlMs: 60_000 });
    rows.push(...(await rowsFor('RedisIdempotencyStore', store, 'Express, keep-alive; records kept 60 s')));
  } finally {
    redis.disconnect();
  }

  const pool = benchPool({ connectionString: process.env.DATABASE_URL, max: CONCURRENCY });
  const table = `bench_idempotency_${run}`;
  try {
    const store = new PostgresIdempotencyStore(pool, { table, sweepIntervalMs: 0 });
    rows.push(
      ...(await rowsFor(
        'PostgresIdempotencyStore',
        store,
        'Express, keep-alive; own transaction per request; synchronous_commit as configured',
      )),
    );
  } finally {
    await dropBenchTables(pool, [table]);
    await pool.end();
  }
  agent.destroy();
  for (const row of rows) log(`${row.case} (${row.subject}): ${row.ratio.toFixed(2)}×`);
  return rows;
}
