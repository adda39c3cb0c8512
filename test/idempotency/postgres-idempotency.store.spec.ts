import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PgForeignTransactionError,
  PgSchemaMissingError,
  queryableFor,
  runTransaction,
  usePreparedStatements,
} from '@ddd-kit/core/postgres';
import { IdempotencyInProgressError, IdempotencyModule, PostgresIdempotencyStore } from '@ddd-kit/idempotency';
import { describeIdempotencyStoreContract, IDEMPOTENCY_FAULTS } from '@ddd-kit/idempotency/testing';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import { observedPool } from '../repository/support/postgres.support.js';
import { postgresIdempotencyFaults } from '../support/fault-proxy/idempotency-fault-targets.js';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

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
    let ran!: () => void;
    const runOver = new Promise<void>((resolve) => (ran = resolve));
    const first = inTransaction(pool, async () => {
      const outcome = await store.run({ key: 'ambient', fingerprint: 'f' }, async () => 'first');
      ran();
      await gate; // the run is over, its transaction is not: the record is not committed yet
      return outcome;
    });
    await waitFor('the first run to be over inside its open transaction', runOver);
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

  it('replays a run committed after the claim’s snapshot was taken: read again, never a conflict or a second run', async () => {
    const table = 'idem_race';
    const racing = new PostgresIdempotencyStore(pool, { table, sweepIntervalMs: 0 });
    await racing.run({ key: 'race', fingerprint: 'f' }, async () => 'first');
    // The row hidden, then put back by a transaction left open: the next claim's snapshot misses
    // it, and its insert waits for that transaction, which commits the row meanwhile.
    await pool.query(`UPDATE ${table} SET key = key || '#'`);
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE ${table} SET key = rtrim(key, '#')`);
      let ran = false;
      const repeat = racing.run({ key: 'race', fingerprint: 'f' }, async () => ((ran = true), 'second'));
      await waitFor(
        'the claim to wait for the transaction holding the key',
        async () =>
          (
            await pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
              [`%INSERT INTO "${table}"%`],
            )
          ).rowCount || null,
      );
      await other.query('COMMIT');
      expect(await repeat).toEqual({ result: 'first', replayed: true });
      expect(ran).toBe(false);
    } finally {
      other.release();
    }
  });

  it('a claim that reaches the server twice, run by name on its connection, is still this run’s: once, not in progress', async () => {
    const injector = await postgresIdempotencyFaults(schema.url, 'idem_resent');
    const faulty = await injector.faults.open('lost-reply-resent');
    try {
      // The claim prepared on the connection first: the resend below is Bind and Execute alone (a
      // second Parse of one name would be refused, an error rather than a second claim).
      await faulty.store.run({ key: 'warm', fingerprint: 'f' }, async () => 0);
      let calls = 0;
      const armed = injector.faults.arm('lost-reply-resent', 1);
      expect(await faulty.store.run({ key: 'resent', fingerprint: 'f' }, async () => ++calls)).toEqual({
        result: 1,
        replayed: false,
      });
      await armed.fired;
      armed.cancel();
      expect(calls).toBe(1);
    } finally {
      await faulty.close();
      await injector.close();
    }
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
    // The server's clock ends the retention (1 ms): swept as soon as the sweep sees it past.
    const swept = await waitFor(
      'a sweep to remove the row past its retention',
      async () => (await store.sweep()) || null,
    );
    expect(swept).toBeGreaterThan(0);
  });
});

describe('PostgresIdempotencyStore: statements', () => {
  /** A store on a pool of one connection, every statement recorded; the pool is ended after `fn`. */
  async function onOneConnection(
    table: string,
    fn: (store: PostgresIdempotencyStore, sent: Array<{ text: string; name?: string }>, pool: pg.Pool) => Promise<void>,
    prepared = true,
  ): Promise<void> {
    const onePool = new pg.Pool({ connectionString: schema.url, max: 1 });
    const observed = observedPool(onePool);
    // Said of the pool the store is given.
    if (!prepared) usePreparedStatements(observed.pool, false);
    try {
      const store = new PostgresIdempotencyStore(observed.pool, { table, sweepIntervalMs: 0 });
      await store.ensureSchema();
      observed.sent.length = 0;
      await fn(store, observed.sent, onePool);
    } finally {
      await onePool.end();
    }
  }

  /** What the server holds prepared on the one connection of `onePool`, with how often each ran. */
  const preparedOn = async (onePool: pg.Pool) =>
    (
      await onePool.query('SELECT statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements')
    ).rows.map((row: { statement: string; runs: string }) => ({ statement: row.statement, runs: Number(row.runs) }));

  it('a fresh key costs two statements, claim and completion, each prepared once per connection', async () => {
    await onOneConnection('idem_statements', async (store, sent, onePool) => {
      await store.run({ key: 'a', fingerprint: 'f' }, async () => 1);
      expect(sent.map((s) => s.text.split(/\s/)[0])).toEqual(['BEGIN', 'WITH', 'UPDATE', 'COMMIT']);
      expect(sent.slice(1, 3).every((s) => s.name !== undefined)).toBe(true);
      await store.run({ key: 'b', fingerprint: 'f' }, async () => 2);
      sent.length = 0;
      // A replay is the claim alone.
      expect(await store.run({ key: 'a', fingerprint: 'f' }, async () => 3)).toEqual({ result: 1, replayed: true });
      expect(sent.map((s) => s.text.split(/\s/)[0])).toEqual(['BEGIN', 'WITH', 'COMMIT']);
      const runs = (await preparedOn(onePool)).filter((p) => p.statement.includes('"idem_statements"'));
      expect(runs.map((p) => [p.statement.split(/\s/)[0], p.runs]).sort()).toEqual([
        ['UPDATE', 2],
        ['WITH', 3],
      ]);
    });
  });

  it('sends its statements unnamed on a pool that keeps none prepared (usePreparedStatements(pool, false))', async () => {
    await onOneConnection(
      'idem_unnamed',
      async (store, sent, onePool) => {
        await store.run({ key: 'a', fingerprint: 'f' }, async () => 1);
        expect(await store.run({ key: 'a', fingerprint: 'f' }, async () => 2)).toEqual({ result: 1, replayed: true });
        expect(sent.filter((s) => s.name !== undefined)).toEqual([]);
        expect(await preparedOn(onePool)).toEqual([]);
      },
      false,
    );
  });
});

describe('PostgresIdempotencyStore in IdempotencyModule', () => {
  it('has its table created when the application starts, before any request', async () => {
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
