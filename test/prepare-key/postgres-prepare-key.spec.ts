import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  PrepareKeyArgumentError,
  PreparedValue,
  TTL_FOREVER,
  toTtlAt,
  PostgresPrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import {
  describePrepareKeyContract,
  PREPARE_KEY_FAULTS,
  type PrepareKeyFaultTarget,
} from '@ddd-kit/prepare-key/testing';
import { postgresFaultTarget } from '../support/fault-proxy/prepare-key-fault-targets.js';
import { postgresSchema } from '../support/servers.js';
import { sleep, waitFor } from '../support/wait.js';
import { primitivesOf } from '../../libs/prepare-key/src/prepare-key.primitives.js';
import { statements } from '../../libs/prepare-key/src/backends/postgres/postgres-prepare-key.sql.js';

/**
 * The ambient-transaction protocol, as @ddd-kit/transactional-adapter-pg speaks it: BEGIN on a
 * client of the pool, run `fn` with { pool, client } in the shared AsyncLocalStorage, COMMIT
 * (ROLLBACK when fn throws).
 */
async function inTransaction<T>(pool: pg.Pool, fn: () => Promise<T>): Promise<T> {
  const key = Symbol.for('@ddd-kit/pg-ambient-transaction');
  const storage = ((globalThis as Record<symbol, unknown>)[key] ??=
    new AsyncLocalStorage()) as AsyncLocalStorage<object>;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await storage.run({ pool, client, outer: storage.getStore() }, fn);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

let schema: Awaited<ReturnType<typeof postgresSchema>>;

beforeAll(async () => {
  schema = await postgresSchema('pk_pg');
});

afterAll(async () => {
  await schema.drop();
});

/**
 * A fault proxy of its own for each case: the statements on the records do not show which
 * PrepareKey they are about (the name is a bound parameter), so a proxy shared by cases running
 * at once could not count only the armed case's statements.
 */
function faultProxyPerCase(url: string, table: string): PrepareKeyFaultTarget {
  const byName = new Map<string, PrepareKeyFaultTarget>();
  return {
    open: async (fault, name) => {
      if (name === undefined) throw new Error('faultProxyPerCase: open() needs the name the case will use');
      const own = await postgresFaultTarget(url, table);
      byName.set(name, own.faults);
      const opened = await own.faults.open(fault);
      return {
        factory: opened.factory,
        close: async () => {
          byName.delete(name);
          await opened.close();
          await own.close();
        },
      };
    },
    arm: (fault, name, nth) => {
      const own = byName.get(name);
      if (own === undefined) throw new Error(`faultProxyPerCase: nothing was opened for '${name}'`);
      return own.arm(fault, name, nth);
    },
  };
}

describePrepareKeyContract(
  'PostgreSQL',
  () => {
    const pool = new pg.Pool({ connectionString: schema.url });
    const table = 'contract_records';
    const factory = new PostgresPrepareKeyFactory(pool, { table, sweepIntervalMs: 0 });
    return {
      factory,
      faults: faultProxyPerCase(schema.url, table),
      close: async () => {
        await factory.close();
        await pool.end();
      },
    };
  },
  { faults: PREPARE_KEY_FAULTS, concurrentFaults: true },
);

describe('PostgresPrepareKeyFactory', () => {
  let pool: pg.Pool;

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: schema.url, max: 8 });
  });

  afterAll(async () => {
    await pool.end();
  });

  const rowsOf = async (table: string) =>
    (await pool.query(`SELECT name, key, value, ttl_at, op, drop_at FROM ${table} ORDER BY name, key`)).rows;

  describe('table', () => {
    it('creates its table on first use with the DDL it shows, in the schema it is given', async () => {
      const factory = new PostgresPrepareKeyFactory(pool, {
        schema: schema.schema,
        table: 'firstuse',
        sweepIntervalMs: 0,
      });
      expect(factory.table).toBe(`"${schema.schema}"."firstuse"`);
      expect(factory.ddl[0]).toMatch(/^CREATE TABLE IF NOT EXISTS "[a-z0-9_]+"\."firstuse"/);
      await factory.create('username').prepare('alice', { owner: 'u1' });
      const { rows } = await pool.query(
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'firstuse' ORDER BY ordinal_position`,
        [schema.schema],
      );
      expect(rows).toEqual([
        { column_name: 'name', data_type: 'text' },
        { column_name: 'key', data_type: 'text' },
        { column_name: 'value', data_type: 'text' },
        { column_name: 'ttl_at', data_type: 'bigint' },
        { column_name: 'op', data_type: 'text' },
        { column_name: 'drop_at', data_type: 'bigint' },
      ]);
      expect(await rowsOf('firstuse')).toEqual([
        {
          name: 'username',
          key: 'alice',
          value: '{"owner":"u1"}',
          ttl_at: String(TTL_FOREVER),
          op: expect.any(String),
          drop_at: null,
        },
      ]);
    });

    it('with createTables: false, creates nothing and fails until the table exists', async () => {
      const factory = new PostgresPrepareKeyFactory(pool, {
        table: 'migrated',
        createTables: false,
        sweepIntervalMs: 0,
      });
      await expect(factory.create('n').prepare('k', 1)).rejects.toThrow(/migrated/);
      for (const statement of factory.ddl) await pool.query(statement);
      expect(await factory.create('n').prepare('k', 1)).toBe(true);
    });

    it('many instances creating the table at once all succeed', async () => {
      const factories = Array.from(
        { length: 6 },
        () => new PostgresPrepareKeyFactory(pool, { table: 'racing_ddl', sweepIntervalMs: 0 }),
      );
      const results = await Promise.all(factories.map((f, i) => f.create('n').prepare(`k${i}`, i)));
      expect(results).toEqual([true, true, true, true, true, true]);
    });

    it('refuses identifiers that are not plain names, and other bad options, with a named error', () => {
      for (const table of ['a"b', 'x; DROP TABLE y', '1abc', '', 'a'.repeat(64), 'sch.tab']) {
        expect(() => new PostgresPrepareKeyFactory(pool, { table })).toThrow(PrepareKeyArgumentError);
      }
      expect(() => new PostgresPrepareKeyFactory(pool, { schema: 'public"; --' })).toThrow(/schema/);
      expect(() => new PostgresPrepareKeyFactory(pool, { retentionMs: -1 })).toThrow(/retentionMs/);
      expect(() => new PostgresPrepareKeyFactory(pool, { sweepIntervalMs: 1.5 })).toThrow(/sweepIntervalMs/);
      expect(() => new PostgresPrepareKeyFactory({} as pg.Pool)).toThrow(/Pool/);
    });
  });

  describe('values reach SQL only as parameters', () => {
    it('stores keys and values that look like SQL verbatim, and finds them again', async () => {
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'injection', sweepIntervalMs: 0 });
      const pk = factory.create<string>("name'); DROP TABLE injection; --");
      const key = "k' OR '1'='1";
      expect(await pk.prepare(key, "v'); DELETE FROM injection; --")).toBe(true);
      expect(await pk.prepare("other' OR '1'='1", 'x')).toBe(true);
      expect(await pk.get(key)).toBe("v'); DELETE FROM injection; --");
      expect(await pk.rollback("nothing' OR '1'='1")).toBe(false);
      expect((await rowsOf('injection')).map((r) => r.key)).toEqual(["k' OR '1'='1", "other' OR '1'='1"]);
    });

    it('refuses a non-string key below the validation too', async () => {
      const pk = new PostgresPrepareKeyFactory(pool, { table: 'injection', sweepIntervalMs: 0 }).create('n');
      const operator = { $ne: null } as unknown as string;
      await expect(pk.prepare(operator, 'v')).rejects.toBeInstanceOf(PrepareKeyArgumentError);
      await expect(primitivesOf(pk).doPrepare(operator, '"v"', TTL_FOREVER, 'op')).rejects.toThrow(TypeError);
    });
  });

  describe('listing', () => {
    it('reads each page of records() as a range of the primary key, never sorting the whole name', async () => {
      // The plan with sequential and bitmap scans off: a sort above the index would read and sort every row
      // of the name for each page, so a sweep of a million records would grow with their square.
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'listing', sweepIntervalMs: 0 });
      const pk = factory.create('n');
      for (const key of ['b', 'a', 'c']) await pk.prepare(key, key);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL enable_seqscan = off');
        await client.query('SET LOCAL enable_bitmapscan = off');
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${statements(factory.table).page}`, ['n', 'a', 500]);
        const plan = JSON.stringify(rows[0]['QUERY PLAN']);
        expect(plan).toMatch(/"Node Type":"Index (Only )?Scan"/);
        expect(plan).not.toMatch(/"Node Type":"(Incremental )?Sort"/);
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
      const seen: string[] = [];
      for await (const record of pk.records({ pageSize: 1 })) seen.push(record.key);
      expect(seen.sort()).toEqual(['a', 'b', 'c']);
    });
  });

  describe('expiry, retention and the sweep (by the database server clock)', () => {
    it('keeps an expired record readable by getValue until the sweep deletes it a retention period after ttlAt', async () => {
      // Readable: expired a second ago with a minute of retention left, which no slow step can
      // use up. Gone: a record whose ttlAt + retention the database server's clock has passed,
      // which only real time moves: the wait ends past it however long it runs.
      const retained = new PostgresPrepareKeyFactory(pool, {
        table: 'retention',
        retentionMs: 60_000,
        sweepIntervalMs: 0,
      });
      const retentionMs = 300;
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'retention', retentionMs, sweepIntervalMs: 0 });
      const expiredAt = Date.now() - 1_000;
      expect(await retained.create('n').prepare('expired', toTtlAt('v', expiredAt))).toBe(true);
      const pk = factory.create('n');
      const ttlAt = Date.now() + 100;
      expect(await pk.prepare('temp', toTtlAt('v', ttlAt))).toBe(true);
      expect(await pk.prepare('forever', 'v')).toBe(true);
      const dropAt = async (key: string) => (await rowsOf('retention')).find((r) => r.key === key)?.drop_at;
      expect(await dropAt('temp')).toBe(String(ttlAt + retentionMs));
      expect(await dropAt('expired')).toBe(String(expiredAt + 60_000));

      expect(await pk.get('expired')).toBeUndefined();
      expect(await pk.getValue('expired')).toEqual(new PreparedValue('v', expiredAt));

      await sleep(Math.max(0, ttlAt + retentionMs + 100 - Date.now()));
      expect(await pk.getValue('temp')).toBeUndefined(); // past its drop time: gone, swept or not
      expect(await factory.sweep()).toBe(1);
      expect((await rowsOf('retention')).map((r) => r.key)).toEqual(['expired', 'forever']);
    });

    it("sweeps rollbacks' tombstones once they are old, and runs the sweep by itself when asked to", async () => {
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'tombstones', sweepIntervalMs: 50 });
      const pk = factory.create('n');
      await pk.prepare('k', 'v');
      expect(await pk.rollback('k')).toBe(true);
      const [tombstone] = await rowsOf('tombstones');
      expect(tombstone).toMatchObject({ key: 'k', value: null, ttl_at: null });
      expect(Number(tombstone.drop_at)).toBeGreaterThan(Date.now() + 100_000);
      await pool.query(`UPDATE tombstones SET drop_at = 0`);
      // The sweep runs every 50 ms by itself: its next run deletes the row.
      await waitFor('the sweep to delete the old tombstone', async () => (await rowsOf('tombstones')).length === 0);
      await factory.close();
    });
  });

  describe('in an ambient transaction', () => {
    it('a reservation commits or rolls back with the transaction', async () => {
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'tx', sweepIntervalMs: 0 });
      const pk = factory.create('username');
      await pk.get('warm-up'); // the table exists before the transactions start
      await expect(
        inTransaction(pool, async () => {
          expect(await pk.prepare('rolled-back', 'u1')).toBe(true);
          expect(await pk.get('rolled-back')).toBe('u1'); // visible inside the transaction
          throw new Error('the use case failed');
        }),
      ).rejects.toThrow('the use case failed');
      expect(await pk.getValue('rolled-back')).toBeUndefined();
      await inTransaction(pool, async () => {
        expect(await pk.prepare('committed', 'u2')).toBe(true);
      });
      expect(await pk.get('committed')).toBe('u2');
    });

    it('two concurrent transactions preparing one key: exactly one commits holding it, the other sees false', async () => {
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'tx_race', sweepIntervalMs: 0 });
      const pk = factory.create('username');
      await pk.get('warm-up');
      for (let round = 0; round < 20; round++) {
        const key = `k${round}`;
        let firstPrepared!: () => void;
        const prepared = new Promise<void>((resolve) => (firstPrepared = resolve));
        const outcomes = await Promise.allSettled([
          inTransaction(pool, async () => {
            const won = await pk.prepare(key, 'first');
            firstPrepared();
            // Hold the row until the second waits on it.
            await waitFor('the second transaction to wait on the row', async () => {
              const { rowCount } = await pool.query(
                `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%tx_race%'`,
              );
              return rowCount === 1;
            });
            if (round % 2 === 1) throw new Error('first rolls back');
            return won;
          }),
          (async () => {
            await prepared;
            return inTransaction(pool, () => pk.prepare(key, 'second'));
          })(),
        ]);
        const holder = await pk.get(key);
        if (round % 2 === 0) {
          expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'rejected'))).toEqual([true, false]);
          expect(holder).toBe('first');
        } else {
          // The first rolled back: the second, which waited on the row, took the key.
          expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'rejected'))).toEqual(['rejected', true]);
          expect(holder).toBe('second');
        }
      }
    });

    it('many concurrent transactions on one key: one winner, and the losers never see true', async () => {
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'tx_many', sweepIntervalMs: 0 });
      const pk = factory.create('n');
      await pk.get('warm-up');
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => inTransaction(pool, () => pk.prepare('k', `t${i}`))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await pk.get('k')).toBe(`t${results.indexOf(true)}`);
    });

    it('the sweep and the table creation do not join the transaction', async () => {
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'tx_ddl', sweepIntervalMs: 0 });
      const pk = factory.create('n');
      await expect(
        inTransaction(pool, async () => {
          await pk.prepare('k', 'v');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      // The table created on first use, inside that transaction's call, survived its rollback.
      expect(await pk.prepare('k', 'v')).toBe(true);
    });
  });
});
