// A Nest application as one on PostgreSQL with @nestjs-cls/transactional is written: an
// @Idempotent() route whose @Transactional() service writes through TransactionHost, and a
// PostgresIdempotencyStore opening the request's transaction through that host. It runs in a
// child process (nestjs-cls is CommonJS requiring the ES-module Nest 12, which Jest's loader
// cannot do on Node 20) and reports the port it listens on. FIXTURE_DATABASE_URL names the database.
import 'reflect-metadata';
import { Body, Controller, Injectable, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import pg from 'pg';
import { IdempotencyModule, Idempotent, PostgresIdempotencyStore } from '@ddd-kit/idempotency';
import { TransactionalAdapterPg } from '@ddd-kit/transactional-adapter-pg';

const pool = new pg.Pool({ connectionString: process.env.FIXTURE_DATABASE_URL, max: 4 });
const useHost = process.env.FIXTURE_MODE !== 'own-transaction';

class Orders {
  constructor(txHost) {
    this.txHost = txHost;
  }

  async place(item, fail) {
    await this.txHost.tx.query('INSERT INTO orders (item) VALUES ($1)', [item]);
    // The run's in-progress row is visible here only inside the run's own transaction.
    const { rows } = await this.txHost.tx.query("SELECT count(*)::int AS n FROM ddd_kit_idempotency WHERE state = 'p'");
    if (fail) throw new Error('the use case fails after its write');
    return { item, pendingSeen: rows[0].n };
  }
}
Reflect.defineMetadata('design:paramtypes', [TransactionHost], Orders);
Reflect.decorate([Injectable()], Orders);
decorateMethod(Orders, 'place', Transactional());

class OrdersController {
  constructor(orders) {
    this.orders = orders;
  }

  place(body) {
    return this.orders.place(body.item, body.fail === true);
  }
}
Reflect.defineMetadata('design:paramtypes', [Orders], OrdersController);
Body()(OrdersController.prototype, 'place', 0);
decorateMethod(OrdersController, 'place', Post(), Idempotent({ required: true }));
Reflect.decorate([Controller('orders')], OrdersController);

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        ClsModule.forRoot({
          global: true,
          middleware: { mount: true },
          plugins: [new ClsPluginTransactional({ adapter: new TransactionalAdapterPg({ pool }) })],
        }),
        IdempotencyModule.forRootAsync({
          inject: [TransactionHost],
          useFactory: (txHost) => ({
            store: new PostgresIdempotencyStore(pool, {
              sweepIntervalMs: 0,
              ...(useHost ? { transaction: (fn) => txHost.withTransaction(fn) } : {}),
            }),
          }),
        }),
      ],
      controllers: [OrdersController],
      providers: [Orders],
    }),
  ],
  AppModule,
);

function decorateMethod(target, name, ...decorators) {
  const descriptor = Reflect.decorate(
    decorators,
    target.prototype,
    name,
    Object.getOwnPropertyDescriptor(target.prototype, name),
  );
  Object.defineProperty(target.prototype, name, descriptor);
}

const app = await NestFactory.create(AppModule, { logger: false });
await app.listen(0, '127.0.0.1');
process.on('message', async (message) => {
  if (message !== 'stop') return;
  await app.close();
  await pool.end();
  process.disconnect();
});
process.send({ port: app.getHttpServer().address().port });
