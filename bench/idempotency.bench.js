// @ddd-kit/idempotency over HTTP: a POST to an @Idempotent() route of a Nest application
// (Express) with a fresh Idempotency-Key each time, beside the same request without the header
// (the route then runs as any other: the interceptor only looks for the header).
//
// Two routes:
//  - /things does no work: the difference is all the key costs — the fingerprint (canonical
//    JSON of the body, digests) and the store's steps; on PostgreSQL that includes a transaction
//    of the store's own per request, which the route without the header does not open.
//  - /orders is the fair baseline: a `@Transactional()` use case (nestjs-cls with
//    @ddd-kit/transactional-adapter-pg, as in apps/registration) inserting one row. With the
//    header on PostgreSQL the store opens the request's transaction through the transaction
//    host and the use case joins it (record, row and completion commit together); on Redis
//    the record is kept beside it. Each ratio's baseline is that same route without the header.
// And a repeat of one key (a replay) beside the same request without a key.
// Every answer is checked: 201 and the handler's body; with a fresh key, no Idempotent-Replayed
// header; on a repeat, the header and the first body.
import 'reflect-metadata';
import http from 'node:http';
import { Body, Controller, Inject, Injectable, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsPluginTransactional, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { ClsModule } from 'nestjs-cls';
import { Redis } from 'ioredis';
import { TransactionalAdapterPg } from '@ddd-kit/transactional-adapter-pg';
import { benchPool, COMMIT_MODES, dropBenchTables, serverFacts } from './postgres.js';
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
const ORDERS = `bench_idem_orders_${run}`;
const RECORDS = `bench_idempotency_${run}`;

/** Decorates `method` of `target` as TypeScript would. */
function decorate(target, method, decorators) {
  Reflect.decorate(decorators, target.prototype, method, Object.getOwnPropertyDescriptor(target.prototype, method));
}

class ThingsController {
  create(received) {
    return { id: 'u-1', username: received.username };
  }
}
Body()(ThingsController.prototype, 'create', 0);
decorate(ThingsController, 'create', [Post('things'), Idempotent()]);
Reflect.decorate([Controller()], ThingsController);

// The fair baseline's use case: one row inserted in a @Transactional() method, through txHost.tx.
let orderIds = 0;
class OrdersService {
  constructor(txHost) {
    this.txHost = txHost;
  }
  async place(username) {
    await this.txHost.tx.query(`INSERT INTO ${ORDERS} (id, username) VALUES ($1, $2)`, [
      `${process.pid}-${++orderIds}`,
      username,
    ]);
    return { id: 'u-1', username };
  }
}
Inject(TransactionHost)(OrdersService, undefined, 0);
decorate(OrdersService, 'place', [Transactional()]);
Reflect.decorate([Injectable()], OrdersService);

class OrdersController {
  constructor(orders) {
    this.orders = orders;
  }
  create(received) {
    return this.orders.place(received.username);
  }
}
Inject(OrdersService)(OrdersController, undefined, 0);
Body()(OrdersController.prototype, 'create', 0);
decorate(OrdersController, 'create', [Post('orders'), Idempotent()]);
Reflect.decorate([Controller()], OrdersController);

/** The app of the /things route, with `store`. */
function thingsModule(store) {
  class AppModule {}
  Reflect.decorate(
    [Module({ imports: [IdempotencyModule.forRoot({ store })], controllers: [ThingsController] })],
    AppModule,
  );
  return AppModule;
}

/** The app of the /orders route: @Transactional() on `pool`, the store made from the transaction host. */
function ordersModule(pool, storeFor) {
  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: [
          ClsModule.forRoot({
            global: true,
            plugins: [new ClsPluginTransactional({ adapter: new TransactionalAdapterPg({ pool }) })],
          }),
          IdempotencyModule.forRootAsync({
            inject: [TransactionHost],
            useFactory: (txHost) => ({ store: storeFor(txHost) }),
          }),
        ],
        controllers: [OrdersController],
        providers: [OrdersService],
      }),
    ],
    AppModule,
  );
  return AppModule;
}

async function startApp(AppModule) {
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, port: app.getHttpServer().address().port };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** One POST; resolves { status, replayed, body }. */
function post(port, path, key) {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    if (key !== undefined) headers['idempotency-key'] = `"${key}"`;
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers }, (res) => {
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

/**
 * The rows of one app: a fresh key vs none on `path` (and, with `replay`, a repeated key vs
 * none). `label` names the store, `route` what the route does, `baseline` the other side.
 */
async function rowsFor({ label, AppModule, path, route, settings, target, replay = false }) {
  const { app, port } = await startApp(AppModule);
  try {
    const nextKey = freshKeys(`bench-${run}-${label}-${path}-${settings}-`);
    const slice = (op) => () => measureConcurrent(op, { concurrency: CONCURRENCY, ms: SLICE_MS });
    const withKey = slice(async () => check(await post(port, path, nextKey()), false));
    const without = slice(async () => check(await post(port, path, undefined), false));
    const fresh = await alternate(withKey, without, { pairs: PAIRS });
    const rows = [
      {
        case: `POST ${path} (${route}) with a fresh Idempotency-Key vs without, ${CONCURRENCY} concurrent`,
        subject: `@Idempotent() on ${label}`,
        baseline: `the same route (${route}) without the header`,
        ...fresh,
        ...(target === undefined ? {} : { target }),
        settings,
        note: notes(cpuNote(fresh)),
      },
    ];
    if (replay) {
      const repeated = `bench-${run}-repeat`;
      check(await post(port, path, repeated), false);
      const again = slice(async () => check(await post(port, path, repeated), true));
      const replays = await alternate(again, without, { pairs: PAIRS });
      rows.push({
        case: `POST ${path} (${route}) repeating one Idempotency-Key (a replay) vs without, ${CONCURRENCY} concurrent`,
        subject: `@Idempotent() on ${label}`,
        baseline: `the same route (${route}) without the header`,
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

const NO_WORK = 'no work';
const ONE_ROW = '@Transactional() use case inserting one row on PostgreSQL';

export default async function bench({ log }) {
  const rows = [];
  rows.push(
    ...(await rowsFor({
      label: 'MemoryIdempotencyStore',
      AppModule: thingsModule(new MemoryIdempotencyStore()),
      path: '/things',
      route: NO_WORK,
      settings: 'Express, keep-alive',
      replay: true,
    })),
  );

  const redis = new Redis(process.env.REDIS_URL);
  const redisStore = () => new RedisIdempotencyStore(redis, { keyPrefix: `bench:${run}:idem:`, ttlMs: 60_000 });
  try {
    rows.push(
      ...(await rowsFor({
        label: 'RedisIdempotencyStore',
        AppModule: thingsModule(redisStore()),
        path: '/things',
        route: NO_WORK,
        settings: 'Express, keep-alive; records kept 60 s',
      })),
    );

    const setup = benchPool({ connectionString: process.env.DATABASE_URL, max: CONCURRENCY });
    const facts = await serverFacts(setup);
    try {
      rows.push(
        ...(await rowsFor({
          label: 'PostgresIdempotencyStore',
          AppModule: thingsModule(new PostgresIdempotencyStore(setup, { table: RECORDS, sweepIntervalMs: 0 })),
          path: '/things',
          route: NO_WORK,
          settings: `Express, keep-alive; the store's own transaction per request; ${facts}, synchronous_commit as configured`,
        })),
      );
      await setup.query(`CREATE TABLE ${ORDERS} (id text PRIMARY KEY, username text NOT NULL)`);
      // The fair rows, in both commit modes: off, the client's costs weigh most.
      for (const mode of COMMIT_MODES) {
        const pool = benchPool({ connectionString: process.env.DATABASE_URL, max: CONCURRENCY, options: mode.options });
        try {
          rows.push(
            ...(await rowsFor({
              label: 'PostgresIdempotencyStore',
              AppModule: ordersModule(
                pool,
                (txHost) =>
                  new PostgresIdempotencyStore(pool, {
                    table: RECORDS,
                    sweepIntervalMs: 0,
                    transaction: (fn) => txHost.withTransaction(fn),
                  }),
              ),
              path: '/orders',
              route: ONE_ROW,
              target: 0.7,
              settings: `Express, keep-alive; the record in the use case's transaction; ${facts}, ${mode.label}`,
            })),
            ...(await rowsFor({
              label: 'RedisIdempotencyStore',
              AppModule: ordersModule(pool, () => redisStore()),
              path: '/orders',
              route: ONE_ROW,
              target: 0.85,
              settings: `Express, keep-alive; records kept 60 s on Redis, the row on ${facts}, ${mode.label}`,
            })),
          );
        } finally {
          await pool.end();
        }
      }
    } finally {
      await dropBenchTables(setup, [RECORDS, ORDERS]);
      await setup.end();
    }
  } finally {
    redis.disconnect();
  }
  agent.destroy();
  for (const row of rows) log(`${row.case} (${row.subject}, ${row.settings}): ${row.ratio.toFixed(2)}×`);
  return rows;
}
