// A Nest application whose transactions are an ORM's (FIXTURE_ORM: typeorm or drizzle), opened by
// @nestjs-cls/transactional's own adapter for it, with ddd-kit's PostgreSQL parts joining them
// through OrmTransactionsModule. Driven by orm-transactions.spec.ts through child-app.ts.
// FIXTURE_DATABASE_URL names the database; FIXTURE_OTHER_URL another one (a part on it must fail).
import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional, Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionalAdapterDrizzleOrm } from '@nestjs-cls/transactional-adapter-drizzle-orm';
import { DataSource, EntitySchema } from 'typeorm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import {
  Aggregate,
  AggregateRoot,
  getRepositoryToken,
  PostgresRepository,
  RepositoryModule,
  UniqueKey,
} from '@ddd-kit/repository';
import { PostgresPrepareKeyFactory, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { PostgresIdempotencyStore } from '@ddd-kit/idempotency';
import { queryableFor } from '@ddd-kit/core/postgres';
import { drizzleOrm, getOrmPoolToken, OrmTransactionsModule, typeOrm } from '@ddd-kit/transactional-adapter-pg/orm';
import { decorateMethod, serve } from '../../support/child-app.serve.mjs';

const URL = process.env.FIXTURE_DATABASE_URL;
const ORM = process.env.FIXTURE_ORM;
const ORM_DB = 'ORM_DB';

/** The app's own entity, written through the ORM, and what the ORM says its transaction id is. */
const orms = {
  typeorm: {
    adapter: () => new TransactionalAdapterTypeOrm({ dataSourceToken: ORM_DB }),
    open: () =>
      new DataSource({
        type: 'postgres',
        url: URL,
        entities: [
          new EntitySchema({
            name: 'Note',
            tableName: 'notes',
            columns: { id: { type: 'text', primary: true }, body: { type: 'text' } },
          }),
        ],
      }).initialize(),
    close: (db) => db.destroy(),
    insert: (tx, id) => tx.getRepository('Note').insert({ id, body: 'entity' }),
    txid: async (tx) => (await tx.query('SELECT txid_current()::text AS id'))[0].id,
    seam: typeOrm,
  },
  drizzle: {
    adapter: () => new TransactionalAdapterDrizzleOrm({ drizzleInstanceToken: ORM_DB }),
    open: async () => drizzle(new pg.Pool({ connectionString: URL, max: 6 })),
    close: (db) => db.$client.end(),
    insert: (tx, id) => tx.insert(notes).values({ id, body: 'entity' }),
    txid: async (tx) => (await tx.execute(sql`SELECT txid_current()::text AS id`)).rows[0].id,
    seam: drizzleOrm,
  },
};
const notes = pgTable('notes', { id: text('id').primaryKey(), body: text('body').notNull() });
const orm = orms[ORM];

class Product extends AggregateRoot {
  constructor(id, sku) {
    super(id);
    this.sku = sku;
  }
}
UniqueKey('sku', (product) => product.sku)(Product);
Aggregate({ name: 'product' })(Product);

class ProductRepository extends PostgresRepository {
  table = 'products';
  columns = { sku: 'text NOT NULL' };
  toRow(product) {
    return { sku: product.sku };
  }
  toAggregate(row) {
    return new Product(row.id, row.sku);
  }
  /** txid_current() where this repository's statements run. */
  async txid() {
    return (await this.query({ text: 'SELECT txid_current()::text AS id' })).rows[0].id;
  }
}

const other = process.env.FIXTURE_OTHER_URL ? new pg.Pool({ connectionString: process.env.FIXTURE_OTHER_URL }) : null;
const gates = new Map();
/** Resolves once `count` callers reached the barrier named `name`. */
function barrier(name, count) {
  let gate = gates.get(name);
  if (gate === undefined) {
    let open;
    gate = { waiting: 0, opened: new Promise((resolve) => (open = resolve)), open };
    gates.set(name, gate);
  }
  if (++gate.waiting === count) gate.open();
  return gate.opened;
}

class Registration {
  constructor(txHost, products) {
    this.txHost = txHost;
    this.products = products;
  }

  /**
   * One use case: the ORM's entity, then the aggregate (its SKU reserved, its event in the
   * outbox). `options`: fail after both; wait at a barrier after the entity; SIGKILL the process
   * after `killAfter` ('entity' or 'aggregate'); leave `late` work running past the commit.
   */
  async register(id, sku, options = {}) {
    await orm.insert(this.txHost.tx, id);
    const seen = { entity: await orm.txid(this.txHost.tx) };
    if (options.killAfter === 'entity') process.kill(process.pid, 'SIGKILL');
    if (options.barrier) await barrier(options.barrier, 2);
    await this.products.insert(new Product(id, sku));
    // The request's idempotency record, in the same transaction.
    await idempotency.run({ key: id, fingerprint: sku }, async () => 'registered');
    seen.dddKit = await this.products.txid();
    if (options.killAfter === 'aggregate') process.kill(process.pid, 'SIGKILL');
    if (options.fail) throw new Error('use case failed');
    if (options.late)
      this.late = (async () => {
        await options.late;
        return this.products.txid();
      })();
    return seen;
  }

  /** An aggregate alone, in whatever transaction the propagation gives it. */
  async addProduct(id, sku, fail) {
    await this.products.insert(new Product(id, sku));
    if (fail) throw new Error('inner failed');
  }

  /**
   * The entity, then the aggregate `inner` through `propagation`, then the aggregate `after`;
   * throws at the end when `fail`.
   */
  async withInner(propagation, inner, fail) {
    await orm.insert(this.txHost.tx, 'outer');
    const method = { nested: 'addNested', requiresNew: 'addNew', notSupported: 'addWithout' }[propagation];
    await this[method](inner, `SKU-${inner}`, propagation === 'nested').catch(() => undefined);
    await this.products.insert(new Product('after', 'SKU-after'));
    if (fail) throw new Error('outer failed');
  }

  /** A part on another database, called inside the ORM's transaction. */
  async onOtherDatabase(id) {
    await orm.insert(this.txHost.tx, id);
    await queryableFor(other, 'A part on the other database').query('SELECT 1');
  }
}
Injectable()(Registration);
Inject(TransactionHost)(Registration, undefined, 0);
Inject(getRepositoryToken(Product))(Registration, undefined, 1);
decorateMethod(Registration, 'register', Transactional());
decorateMethod(Registration, 'onOtherDatabase', Transactional());
decorateMethod(Registration, 'withInner', Transactional());
Registration.prototype.addNested = Registration.prototype.addProduct;
Registration.prototype.addNew = Registration.prototype.addProduct;
Registration.prototype.addWithout = Registration.prototype.addProduct;
decorateMethod(Registration, 'addNested', Transactional(Propagation.Nested));
decorateMethod(Registration, 'addNew', Transactional(Propagation.RequiresNew));
decorateMethod(Registration, 'addWithout', Transactional(Propagation.NotSupported));

class DatabaseModule {}
Module({
  providers: [{ provide: ORM_DB, useFactory: orm.open }],
  exports: [ORM_DB],
})(DatabaseModule);
const POOL = getOrmPoolToken();

class AppModule {}
Module({
  imports: [
    ClsModule.forRoot({
      global: true,
      plugins: [new ClsPluginTransactional({ imports: [DatabaseModule], adapter: orm.adapter() })],
    }),
    OrmTransactionsModule.forRoot({ orm: orm.seam }),
    RepositoryModule.forRootAsync({
      inject: [POOL],
      useFactory: (pool) => ({ postgres: { pool }, outbox: { relay: false } }),
    }),
    RepositoryModule.forFeature([{ aggregate: Product, repository: ProductRepository }]),
    PrepareKeyModule.forRootAsync({
      inject: [POOL],
      useFactory: (pool) => ({ factory: new PostgresPrepareKeyFactory(pool) }),
    }),
  ],
  providers: [Registration],
})(AppModule);

let registration;
let app;
let idempotency;
await serve(
  async () => {
    app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
    app.enableShutdownHooks();
    registration = app.get(Registration);
    idempotency = new PostgresIdempotencyStore(app.get(POOL));
    await idempotency.ensureSchema();
    const close = app.close.bind(app);
    app.close = async () => {
      await idempotency.close();
      await close();
      await orm.close(app.get(ORM_DB, { strict: false }));
      await other?.end();
    };
    return app;
  },
  {
    register: (id, sku, options) => registration.register(id, sku, options),
    registerLeavingLateWork: async (id, sku) => {
      let go;
      const late = new Promise((resolve) => (go = resolve));
      await registration.register(id, sku, { late });
      go();
      return registration.late;
    },
    race: (sku) =>
      Promise.allSettled([
        registration.register('race-1', sku, { barrier: sku }),
        registration.register('race-2', sku, { barrier: sku }),
      ]).then((outcomes) =>
        outcomes.map((o) => (o.status === 'fulfilled' ? 'committed' : (o.reason.code ?? o.reason.message))),
      ),
    onOtherDatabase: (id) => registration.onOtherDatabase(id),
    withInner: (propagation, inner, fail) => registration.withInner(propagation, inner, fail),
  },
);
