import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PgForeignTransactionError, PgSchemaMissingError, runTransaction } from '@ddd-kit/core/postgres';
import pg from 'pg';
import { postgresSchema } from '../../../../../test/support/servers.js';
import { IdempotencyArgumentError } from '../../errors/idempotency-argument.error.js';
import { IdempotencyInProgressError } from '../../errors/idempotency-in-progress.error.js';
import { describeIdempotencyStoreContract, IDEMPOTENCY_FAULTS } from '../../testing/index.js';
import { postgresIdempotencyFaults } from '../../../../../test/support/fault-proxy/idempotency-fault-targets.js';
import { PostgresIdempotencyStore } from './postgres-idempotency.store.js';

let schema: Awaited<ReturnType<typeof postgresSchema>>;

beforeAll(async () => {
  schema = await postgresSchema('idem_pg');
});

afterAll(async () => {
  await schema.drop();
});

/** A transaction on `pool` as the transaction path publishes it (what @Transactional() and runInTransaction do). */
const inTransaction = <R>(pool: pg.Pool, fn: () => Promise<R>) => runTransaction(pool, undefined, () => fn());

describeIdempotencyStoreContract(
  'PostgreSQL',
  async () => {
    const pool = new pg.Pool({ connectionString: schema.url, max: 8 });
    const injector = await postgresIdempotencyFaults(schema.url, 'idem_contract');
    return {
      store: new PostgresIdempotencyStore(pool, { table: 'idem_contract', sweepIntervalMs: 0 }),
      transaction: (fn) => inTransaction(pool, fn),
      faults: injector.faults,
      close: async () => {
        await injector.close();
        await pool.end();
      },
    };
  },
  { atomicWithEffect: true, faults: IDEMPOTENCY_FAULTS },
);

describe('PostgresIdempotencyStore', () => {
  let pool: pg.Pool;
  let store: PostgresIdempotencyStore;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: schema.url, max: 8 });
    store = new PostgresIdempotencyStore(pool, { table: 'idem_effects_test', sweepIntervalMs: 0 });
    await store.ensureSchema();
    await pool.query('CREATE TABLE effects (key text PRIMARY KEY, n int NOT NULL)');
  });

  afterAll(async () => {
    await store.close();
    await pool.end();
  });

  const effect = (key: string) =>
    pool.query('INSERT INTO effects (key, n) VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET n = effects.n + 1', [key]);
  const effectCount = async (key: string) =>
    Number((await pool.query('SELECT n FROM effects WHERE key = $1', [key])).rows[0]?.n ?? 0);

  it('with no transaction, runs the work in its own: the effect and the record commit together', async () => {
    // The effect's statement, through the ambient transaction the store opened, joins it.
    const { queryableFor } = await import('@ddd-kit/core/postgres');
    const inside = (key: string) =>
      queryableFor(pool, 'test').query(
        'INSERT INTO effects (key, n) VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET n = effects.n + 1',
        [key],
      );
    await expect(
      store.run({ key: 'own-fails', fingerprint: 'f' }, async () => {
        await inside('own-fails');
        throw new Error('after the effect');
      }),
    ).rejects.toThrow('after the effect');
    expect(await effectCount('own-fails')).toBe(0);
    await store.run({ key: 'own-ok', fingerprint: 'f' }, async () => void (await inside('own-ok')));
    await store.run({ key: 'own-ok', fingerprint: 'f' }, async () => void (await inside('own-ok')));
    expect(await effectCount('own-ok')).toBe(1);
  });

  it('joins the ambient transaction: a second transaction meanwhile is in progress, then replays', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let ran = false;
    const first = inTransaction(pool, async () => {
      const outcome = await store.run({ key: 'ambient', fingerprint: 'f' }, async () => ((ran = true), 'first'));
      await gate; // the run is over, its transaction is not: the record is not committed yet
      return outcome;
    });
    const deadline = Date.now() + 20_000;
    while (!ran && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await expect(
      inTransaction(pool, () => store.run({ key: 'ambient', fingerprint: 'f' }, async () => 'second')),
    ).rejects.toThrow(IdempotencyInProgressError);
    release();
    expect(await first).toEqual({ result: 'first', replayed: false });
    expect(await store.run({ key: 'ambient', fingerprint: 'f' }, async () => 'third')).toEqual({
      result: 'first',
      replayed: true,
    });
  });

  it('an effect on the pool and the record roll back together in the ambient transaction', async () => {
    const { queryableFor } = await import('@ddd-kit/core/postgres');
    await expect(
      inTransaction(pool, async () => {
        await store.run({ key: 'rb', fingerprint: 'f' }, async () => {
          await queryableFor(pool, 'test').query('INSERT INTO effects (key, n) VALUES ($1, 1)', ['rb']);
        });
        throw new Error('the use case fails');
      }),
    ).rejects.toThrow('the use case fails');
    expect(await effectCount('rb')).toBe(0);
    expect(await store.run({ key: 'rb', fingerprint: 'f' }, async () => void (await effect('rb')))).toEqual({
      result: undefined,
      replayed: false,
    });
    expect(await effectCount('rb')).toBe(1);
  });

  it('refuses a run inside another pool’s transaction, unless told to autocommit there', async () => {
    const other = new pg.Pool({ connectionString: schema.url, max: 2 });
    try {
      await expect(
        inTransaction(other, () => store.run({ key: 'foreign', fingerprint: 'f' }, async () => 1)),
      ).rejects.toThrow(PgForeignTransactionError);
      const lenient = new PostgresIdempotencyStore(pool, {
        table: 'idem_effects_test',
        foreignTransaction: 'autocommit',
        sweepIntervalMs: 0,
      });
      expect(
        await inTransaction(other, () => lenient.run({ key: 'foreign', fingerprint: 'f' }, async () => 1)),
      ).toEqual({
        result: 1,
        replayed: false,
      });
    } finally {
      await other.end();
    }
  });

  it('with createTables: false, reports the missing table and the statements that create it', async () => {
    const unmigrated = new PostgresIdempotencyStore(pool, {
      table: 'idem_missing',
      createTables: false,
      sweepIntervalMs: 0,
    });
    await expect(unmigrated.ensureSchema()).rejects.toThrow(PgSchemaMissingError);
    expect(unmigrated.schemaStatements().join(';\n')).toMatch(/CREATE TABLE IF NOT EXISTS "idem_missing"/);
    for (const statement of unmigrated.schemaStatements()) await pool.query(statement);
    await unmigrated.ensureSchema();
    expect((await unmigrated.run({ key: 'k', fingerprint: 'f' }, async () => 'ok')).replayed).toBe(false);
  });

  it('sweeps rows past their retention', async () => {
    await store.run({ key: 'short', fingerprint: 'f', ttlMs: 1 }, async () => 1);
    const deadline = Date.now() + 20_000;
    let swept = 0;
    while (swept === 0 && Date.now() < deadline) {
      swept += await store.sweep();
      if (swept === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(swept).toBeGreaterThan(0);
  });

  it('refuses bad options', () => {
    expect(() => new PostgresIdempotencyStore({} as pg.Pool)).toThrow(IdempotencyArgumentError);
    expect(() => new PostgresIdempotencyStore(pool, { table: 'a;drop' })).toThrow(IdempotencyArgumentError);
    expect(() => new PostgresIdempotencyStore(pool, { ttlMs: -1 })).toThrow(IdempotencyArgumentError);
  });
});

describe('PostgresIdempotencyStore in IdempotencyModule', () => {
  it('has its table created when the application starts, before any request', async () => {
    const { Test } = await import('@nestjs/testing');
    const { IdempotencyModule } = await import('../../http/idempotency.module.js');
    const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    try {
      const store = new PostgresIdempotencyStore(pool, { table: 'idem_at_start', sweepIntervalMs: 0 });
      const moduleRef = await Test.createTestingModule({ imports: [IdempotencyModule.forRoot({ store })] }).compile();
      const app = await moduleRef.init();
      expect((await pool.query(`SELECT to_regclass('idem_at_start') IS NOT NULL AS present`)).rows[0].present).toBe(
        true,
      );
      await app.close();
    } finally {
      await pool.end();
    }
  });
});
