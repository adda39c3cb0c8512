// @ddd-kit/core with no driver installed, and with a second installed copy of it beside the
// first (core-copy/, put there by the test): the process-wide state — the ambient PostgreSQL
// transaction, the aggregate declarations, the error brand — is one, whichever copy a library
// loaded.
import { strict as assert } from 'node:assert';
import * as core from '@ddd-kit/core';
import { DddKitError, dddKitErrorCode } from '@ddd-kit/core';
import * as coreInternal from '@ddd-kit/core/internal';
import { Aggregate, getAggregateName } from '@ddd-kit/core/internal';
import * as corePostgres from '@ddd-kit/core/postgres';
import { activeTransactionFor, runTransaction, type PgPool } from '@ddd-kit/core/postgres';

type Core = typeof core;
type CoreInternal = typeof coreInternal;
type CorePostgres = typeof corePostgres;

export async function run(): Promise<void> {
  const second = (await import(new URL('../core-copy/dist/index.js', import.meta.url).href)) as Core;
  const secondInternal = (await import(
    new URL('../core-copy/dist/internal/index.js', import.meta.url).href
  )) as CoreInternal;
  const secondPostgres = (await import(
    new URL('../core-copy/dist/postgres/index.js', import.meta.url).href
  )) as CorePostgres;
  assert.notEqual(second.DddKitError, DddKitError, 'the copy is a second module instance');

  class FromCopy extends second.DddKitError {
    override readonly code = 'FROM_COPY';
  }
  assert.ok(new FromCopy('x') instanceof DddKitError);
  assert.equal(dddKitErrorCode(new FromCopy('x')), 'FROM_COPY');
  assert.ok(!(new Error('plain') instanceof DddKitError));

  @secondInternal.Aggregate({ name: 'declared-by-the-copy' })
  class Declared {}
  assert.equal(getAggregateName(Declared), 'declared-by-the-copy');
  @Aggregate({ name: 'declared-by-the-first' })
  class Other {}
  assert.equal(secondInternal.getAggregateName(Other), 'declared-by-the-first');

  // A transaction run by one copy is the ambient one for the other (a stand-in pool records statements).
  const sent: string[] = [];
  const client = {
    query: async (sql: string) => (sent.push(sql), { rows: [], rowCount: 0 }),
    release: () => void sent.push('release'),
    on: () => client,
    removeListener: () => client,
  };
  const pool: PgPool = { connect: async () => client, query: client.query };
  let late: { query(sql: string): Promise<unknown> } | undefined;
  await runTransaction(pool, undefined, async () => {
    assert.ok(secondPostgres.activeTransactionFor(pool), 'the copy sees the transaction the first copy runs');
    assert.equal(secondPostgres.activeTransactionFor(pool), activeTransactionFor(pool));
    const queryable = secondPostgres.queryableFor(pool, 'a part loaded from the copy');
    await queryable.query('SELECT 1');
    late = queryable;
  });
  assert.deepEqual(sent.splice(0), ['BEGIN', 'SELECT 1', 'COMMIT', 'release']);
  await assert.rejects(late!.query('SELECT 2'), (error: unknown) => dddKitErrorCode(error) === 'PG_TRANSACTION_ENDED');
  assert.deepEqual(sent, []);
}
