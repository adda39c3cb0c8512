// A Nest application on PostgreSQL alone, wired the way the README shows: RepositoryModule
// opens the pool from a URL, the transactional plugin starts transactions from that same pool
// (getRepositoryPoolToken()), use cases are @Transactional, a read model is kept by
// @OnDataSync. Driven by postgres-transactions.spec.ts through child-app.ts (see there why a
// child process). FIXTURE_DATABASE_URL names the database, FIXTURE_TABLE the counters' table.
// FIXTURE_MODE=other-pool gives the adapter a pool of its own instead (a newcomer's mistake).
import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional, Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import {
  getRepositoryPoolToken,
  getRepositoryToken,
  OnDataSync,
  OptimisticLockError,
  PostgresRepository,
  RepositoryModule,
  retryOnConflict,
} from '@ddd-kit/repository';
import { TransactionalAdapterPg } from '@ddd-kit/transactional-adapter-pg';
import pg from 'pg';
import { decorateMethod, serve } from '../../support/child-app.serve.mjs';
// The contract suites' Counter, from the built library by path: its entry (@ddd-kit/repository/testing)
// also holds the Jest contract suites, which load only inside Jest.
import { Counter } from '../../../libs/repository/dist/testing/counter.aggregate.js';

class CounterRepository extends PostgresRepository {
  table = process.env.FIXTURE_TABLE;
  // The columns of the tests' CounterPostgresRepository, which reads this table from outside.
  columns = { label: 'text NOT NULL', count: 'integer NOT NULL', tags: 'jsonb NOT NULL' };
  toRow(counter) {
    return { label: counter.label, count: counter.count, tags: counter.tags };
  }
  toAggregate(row) {
    return Counter.restore(row.id, row.label, row.count, row.tags);
  }
}

/** The read model: every event it received, in order, as `type@version:id`. */
class Projection {
  received = [];
  /** Whether nestjs-cls still saw a transaction when a handler ran (it must not: handlers run after the commit). */
  inTransaction = [];
  constructor(txHost) {
    this.txHost = txHost;
  }
  project(events) {
    this.inTransaction.push(this.txHost.isTransactionActive());
    for (const event of events) this.received.push(`${event.type}@${event.version}:${event.id}`);
  }
}
Injectable()(Projection);
Inject(TransactionHost)(Projection, undefined, 0);
decorateMethod(Projection, 'project', OnDataSync(Counter));

class Counters {
  constructor(counters, txHost) {
    this.counters = counters;
    this.txHost = txHost;
  }

  async create(id, fail) {
    await this.counters.insert(new Counter(id, 'created'));
    if (fail) throw new Error('use case failed after the write');
  }

  async increment(id, fail) {
    const counter = await this.counters.findById(id);
    counter.count++;
    await this.counters.update(counter);
    if (fail) throw new Error('use case failed after the write');
  }

  /** Loads, waits until `loaded()` says every racer has loaded, then writes. */
  async incrementAfterAllLoaded(id, loaded) {
    const counter = await this.counters.findById(id);
    await loaded();
    counter.count++;
    await this.counters.update(counter);
  }

  async incrementNested(id, fail) {
    await this.increment(id, fail);
  }

  async createWithoutTransaction(id) {
    await this.counters.insert(new Counter(id, 'autocommitted'));
  }

  /** A transaction that fails after a NOT_SUPPORTED call wrote (and autocommitted) a counter. */
  async failAfterNotSupported(id) {
    await this.createWithoutTransaction(id);
    throw new Error('outer failed');
  }

  /** One transaction: an increment that commits, then a nested one that fails and is undone. */
  async withFailedNested(id) {
    await this.increment(id, false);
    await this.incrementNested(id, true).catch(() => undefined);
  }

  /** What the transaction sees in the middle of a use case (txHost and the repository agree). */
  async peek(id) {
    const counter = await this.counters.findById(id);
    counter.count++;
    await this.counters.update(counter);
    const { rows } = await this.txHost.tx.query(`SELECT count FROM "${process.env.FIXTURE_TABLE}" WHERE id = $1`, [id]);
    throw Object.assign(new Error('rolled back on purpose'), { code: `seen:${rows[0].count}` });
  }
}
Injectable()(Counters);
Inject(getRepositoryToken(Counter))(Counters, undefined, 0);
Inject(TransactionHost)(Counters, undefined, 1);
decorateMethod(Counters, 'create', Transactional());
decorateMethod(Counters, 'increment', Transactional());
decorateMethod(Counters, 'incrementAfterAllLoaded', Transactional());
decorateMethod(Counters, 'incrementNested', Transactional(Propagation.Nested));
decorateMethod(Counters, 'withFailedNested', Transactional());
decorateMethod(Counters, 'createWithoutTransaction', Transactional(Propagation.NotSupported));
decorateMethod(Counters, 'failAfterNotSupported', Transactional());
decorateMethod(Counters, 'peek', Transactional());

const otherPool =
  process.env.FIXTURE_MODE === 'other-pool'
    ? new pg.Pool({ connectionString: process.env.FIXTURE_DATABASE_URL })
    : null;

class AppModule {}
Module({
  imports: [
    RepositoryModule.forRoot({ postgres: { url: process.env.FIXTURE_DATABASE_URL, poolOptions: { max: 8 } } }),
    RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterRepository }]),
    ClsModule.forRoot({
      global: true,
      plugins: [
        new ClsPluginTransactional({
          adapter:
            process.env.FIXTURE_MODE === 'other-pool'
              ? new TransactionalAdapterPg({ pool: otherPool })
              : new TransactionalAdapterPg({ poolToken: getRepositoryPoolToken() }),
        }),
      ],
    }),
  ],
  providers: [Counters, Projection],
})(AppModule);

let app;
await serve(
  async () => {
    app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
    const close = app.close.bind(app);
    app.close = async () => {
      await close();
      await otherPool?.end();
    };
    return app;
  },
  {
    received: () => app.get(Projection).received.splice(0),
    handlersInTransaction: () => app.get(Projection).inTransaction.splice(0),
    failAfterNotSupported: (id) => app.get(Counters).failAfterNotSupported(id),
    create: (id, fail) => app.get(Counters).create(id, fail),
    increment: (id, fail) => app.get(Counters).increment(id, fail),
    withFailedNested: (id) => app.get(Counters).withFailedNested(id),
    peek: (id) => app.get(Counters).peek(id),
    /** `writers` concurrent use cases, each incrementing `times` times, retrying each whole transaction on conflict. */
    contend: async (id, writers, times) => {
      let conflicts = 0;
      await Promise.all(
        Array.from({ length: writers }, async () => {
          for (let i = 0; i < times; i++) {
            await retryOnConflict(() => app.get(Counters).increment(id, false), {
              attempts: 1000,
              onConflict: () => conflicts++,
            });
          }
        }),
      );
      return conflicts;
    },
    /** Transactions updating one counter from the same version: which ones committed, and what the others saw. */
    race: async (id, racers) => {
      let arrived = 0;
      let open;
      const allLoaded = new Promise((resolve) => (open = resolve));
      const loaded = () => (++arrived === racers && open(), allLoaded);
      const results = await Promise.allSettled(
        Array.from({ length: racers }, () => app.get(Counters).incrementAfterAllLoaded(id, loaded)),
      );
      return results.map((r) =>
        r.status === 'fulfilled'
          ? 'committed'
          : r.reason instanceof OptimisticLockError
            ? 'OptimisticLockError'
            : String(r.reason),
      );
    },
  },
).catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
