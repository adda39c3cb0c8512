// @ddd-kit/transactional-adapter-pg with no driver installed: the adapter boots in a Nest
// application and wraps @Transactional methods in BEGIN … COMMIT / ROLLBACK on its pool (here
// a stand-in that records what it is sent), and importing the package loads no pg.
import { strict as assert } from 'node:assert';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { runInTransaction, TransactionalAdapterPg } from '@ddd-kit/transactional-adapter-pg';
import type { Pool } from 'pg';

const sent: string[] = [];
const client = {
  query: async (sql: string) => (sent.push(sql), { rows: [], rowCount: 0 }),
  release: () => void sent.push('release'),
  on: () => client,
  removeListener: () => client,
};
const pool = { connect: async () => client, query: client.query } as unknown as Pool;

@Injectable()
class Work {
  constructor(readonly txHost: TransactionHost<TransactionalAdapterPg>) {}

  /** Returns its transaction's client, which a caller must not use once the method returned. */
  @Transactional()
  async succeed(): Promise<Pick<Pool, 'query'>> {
    await this.txHost.tx.query('SELECT 1');
    return this.txHost.tx;
  }

  @Transactional<TransactionalAdapterPg>({ isolationLevel: 'SERIALIZABLE' })
  async fail(): Promise<void> {
    throw new Error('fails');
  }
}

@Module({
  imports: [
    ClsModule.forRoot({
      global: true,
      plugins: [new ClsPluginTransactional({ adapter: new TransactionalAdapterPg({ pool }) })],
    }),
  ],
  providers: [Work],
})
class AppModule {}

export async function run(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    const work = app.get(Work);
    assert.equal(work.txHost.tx, pool);
    const kept = await work.succeed();
    assert.deepEqual(sent.splice(0), ['BEGIN', 'SELECT 1', 'COMMIT', 'release']);
    // Kept beyond its transaction, the client refuses instead of reaching a pooled connection.
    await assert.rejects(kept.query('SELECT 2'), { code: 'PG_TRANSACTION_ENDED' });
    assert.deepEqual(sent, []);
    await assert.rejects(work.fail(), /fails/);
    assert.deepEqual(sent.splice(0), ['BEGIN ISOLATION LEVEL SERIALIZABLE', 'ROLLBACK', 'release']);
  } finally {
    await app.close();
  }
  assert.equal(await runInTransaction(pool, async () => 42, { readOnly: true }), 42);
  assert.deepEqual(sent.splice(0), ['BEGIN READ ONLY', 'COMMIT', 'release']);
}
