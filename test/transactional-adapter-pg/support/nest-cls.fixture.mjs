// A Nest application using TransactionalAdapterPg the way an application does (ClsModule with
// the transactional plugin, @Transactional methods, TransactionHost), driven by
// transactional-adapter-pg.spec.ts through child-app.ts. FIXTURE_DATABASE_URL names the database;
// FIXTURE_MODE=wrong-token registers a token that does not resolve to a pool.
import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import {
  ClsPluginTransactional,
  getTransactionHostToken,
  Propagation,
  Transactional,
  TransactionHost,
} from '@nestjs-cls/transactional';
import pg from 'pg';
import { TransactionalAdapterPg } from '@ddd-kit/transactional-adapter-pg';
import { decorateMethod, serve } from '../../support/child-app.serve.mjs';

// A ddd-kit part's view of the ambient transaction (COMMON protocol): nothing imported from the adapter.
const KEY = Symbol.for('@ddd-kit/pg-ambient-transaction');
const storage = (globalThis[KEY] ??= new AsyncLocalStorage());
function queryableFor(pool) {
  for (let t = storage.getStore(); t; t = t.outer) if (t.pool === pool) return t.client;
  return pool;
}

const PG_POOL = 'PG_POOL';
const pool = new pg.Pool({ connectionString: process.env.FIXTURE_DATABASE_URL, max: 6 });
// One connection: whatever a request leaves running after its commit meets the next request's transaction.
const single = new pg.Pool({ connectionString: process.env.FIXTURE_DATABASE_URL, max: 1 });

class Notes {
  constructor(txHost, serializableHost, singleHost) {
    this.txHost = txHost;
    this.serializableHost = serializableHost;
    this.singleHost = singleHost;
  }

  /**
   * A child use case the parent does not await (upstream's "nested non-awaited transaction"): it
   * joins the parent's transaction (REQUIRED), then writes through txHost.tx once `gate` opens.
   */
  startLateChild(gate) {
    const late = this.singleHost.withTransaction(async () => {
      await this.singleHost.tx.query('SELECT 1');
      await gate;
      await this.singleHost.tx.query('INSERT INTO notes VALUES ($1, $2)', ['late', 'child']);
    });
    late.catch(() => undefined); // observed by the caller
    return late;
  }

  /** What a ddd-kit part does: finds the transaction through the protocol alone. */
  async writeAsAPart(id) {
    await queryableFor(pool).query('INSERT INTO notes VALUES ($1, $2)', [id, 'part']);
  }

  async write(id) {
    await this.txHost.tx.query('INSERT INTO notes VALUES ($1, $2)', [id, 'host']);
  }

  async create(ids, fail) {
    for (const id of ids) await (id.startsWith('p') ? this.writeAsAPart(id) : this.write(id));
    if (fail) throw new Error('use case failed');
  }

  async createIndependently(id) {
    await this.writeAsAPart(id);
  }

  async createNested(id, fail) {
    await this.writeAsAPart(id);
    if (fail) throw new Error('nested failed');
  }

  async createWithoutTransaction(id) {
    await this.writeAsAPart(id);
    return this.txHost.tx === pool ? 'pool' : 'client';
  }

  async outer(steps, fail) {
    await steps();
    if (fail) throw new Error('outer failed');
  }
}
Injectable()(Notes);
Inject(TransactionHost)(Notes, undefined, 0);
Inject(getTransactionHostToken('serializable'))(Notes, undefined, 1);
Inject(getTransactionHostToken('single'))(Notes, undefined, 2);
decorateMethod(Notes, 'create', Transactional());
decorateMethod(Notes, 'createIndependently', Transactional(Propagation.RequiresNew));
decorateMethod(Notes, 'createNested', Transactional(Propagation.Nested));
decorateMethod(Notes, 'createWithoutTransaction', Transactional(Propagation.NotSupported));
decorateMethod(Notes, 'outer', Transactional());

class DatabaseModule {}
Global()(DatabaseModule);
Module({
  providers: [
    { provide: PG_POOL, useValue: pool },
    { provide: 'NOT_A_POOL', useValue: { url: 'postgres://…' } },
  ],
  exports: [PG_POOL, 'NOT_A_POOL'],
})(DatabaseModule);

class AppModule {}
Module({
  imports: [
    DatabaseModule,
    ClsModule.forRoot({
      global: true,
      plugins: [
        new ClsPluginTransactional({
          imports: [DatabaseModule],
          adapter: new TransactionalAdapterPg({
            poolToken: process.env.FIXTURE_MODE === 'wrong-token' ? 'NOT_A_POOL' : PG_POOL,
          }),
        }),
        new ClsPluginTransactional({
          connectionName: 'single',
          adapter: new TransactionalAdapterPg({ pool: single }),
        }),
        new ClsPluginTransactional({
          connectionName: 'serializable',
          adapter: new TransactionalAdapterPg({ pool, defaultTxOptions: { isolationLevel: 'SERIALIZABLE' } }),
        }),
      ],
    }),
  ],
  providers: [Notes],
})(AppModule);

let notes;
const rows = async (queryable = pool) =>
  (await queryable.query('SELECT id FROM notes ORDER BY id')).rows.map((r) => r.id);

await serve(
  async () => {
    const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
    app.enableShutdownHooks();
    notes = app.get(Notes);
    const close = app.close.bind(app);
    app.close = async () => {
      await close();
      await Promise.all([pool.end(), single.end()]);
    };
    return app;
  },
  {
    reset: () => pool.query('TRUNCATE notes'),
    stored: () => rows(),
    idle: () => pool.idleCount === pool.totalCount,
    create: (ids, fail) => notes.create(ids, fail),
    txKinds: async () => {
      const seen = { outside: notes.txHost.tx === pool ? 'pool' : 'client' };
      await notes.txHost.withTransaction(async () => {
        const tx = notes.txHost.tx;
        seen.inside = tx === pool ? 'pool' : tx instanceof pg.Client ? 'client' : typeof tx;
        seen.protocolAgrees = queryableFor(pool) === tx;
      });
      seen.protocolAfter = queryableFor(pool) === pool ? 'pool' : 'client';
      return seen;
    },
    transactionSettings: (options) =>
      notes.txHost.withTransaction(options, async () => {
        const { rows } = await notes.txHost.tx.query('SELECT current_setting($1) AS iso, current_setting($2) AS ro', [
          'transaction_isolation',
          'transaction_read_only',
        ]);
        return rows[0];
      }),
    defaultIsolation: async () => {
      const level = async () =>
        (await notes.serializableHost.tx.query('SHOW transaction_isolation')).rows[0].transaction_isolation;
      return [
        await notes.serializableHost.withTransaction(level),
        await notes.serializableHost.withTransaction({ isolationLevel: 'READ COMMITTED' }, level),
      ];
    },
    requiredJoins: () => notes.outer(() => notes.create(['h3', 'p3']), true),
    requiresNew: () =>
      notes.outer(async () => {
        await notes.writeAsAPart('p-outer');
        await notes.createIndependently('p-new');
      }, true),
    nested: () =>
      notes.outer(async () => {
        await notes.writeAsAPart('p-before');
        const failed = await notes.createNested('p-undone', true).then(
          () => 'resolved',
          (error) => error.message,
        );
        if (failed !== 'nested failed') throw new Error(`the nested call should have failed, got ${failed}`);
        await notes.createNested('p-kept', false);
        await notes.writeAsAPart('p-after');
      }, false),
    notSupported: async () => {
      let txInside;
      await notes
        .outer(async () => {
          await notes.writeAsAPart('p-in-tx');
          txInside = await notes.createWithoutTransaction('p-autocommit');
          await notes.writeAsAPart('p-in-tx-2');
        }, true)
        .catch((error) => {
          if (error.message !== 'outer failed') throw error;
        });
      return txInside;
    },
    lateChild: async () => {
      let open;
      const gate = new Promise((resolve) => (open = resolve));
      let late;
      await notes.singleHost.withTransaction(async () => {
        await notes.singleHost.tx.query('INSERT INTO notes VALUES ($1, $2)', ['parent', 'x']);
        late = notes.startLateChild(gate);
      });
      // The parent committed; its only connection went back to the pool and now serves the
      // next request's transaction, while the child the parent left running wakes up.
      return notes.singleHost.withTransaction(async () => {
        const txid = async () => (await notes.singleHost.tx.query('SELECT txid_current() AS t')).rows[0].t;
        const next = await txid();
        open();
        const child = await late.then(
          () => 'ran',
          (error) => error.code ?? error.name,
        );
        await notes.singleHost.tx.query('INSERT INTO notes VALUES ($1, $2)', ['next', 'x']);
        return { child, sameTransaction: (await txid()) === next };
      });
    },
    concurrent: async () => {
      // Both write, then both read (each before either commits), then both commit.
      const barrier = (parties) => {
        let arrived = 0;
        let open;
        const opened = new Promise((resolve) => (open = resolve));
        return () => (++arrived === parties && open(), opened);
      };
      const bothWrote = barrier(2);
      const bothRead = barrier(2);
      const run = (id) =>
        notes.txHost.withTransaction(async () => {
          await notes.writeAsAPart(id);
          await bothWrote();
          const seen = await rows(notes.txHost.tx);
          await bothRead();
          return seen;
        });
      return Promise.all([run('p-a'), run('p-b')]);
    },
  },
).catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
