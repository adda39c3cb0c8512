import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { MachineIdHolder, MachineIdOverflowError, PostgresMachineIdDistributor } from '@ddd-kit/id-generator';
import { describeMachineIdDistributorContract, type FaultKind, type Operation } from '@ddd-kit/id-generator/testing';
// The heartbeat's own statement, run by hand inside a transaction the case holds open.
import * as sql from '../../libs/id-generator/src/machine/postgres/postgres-machine-id.sql.js';
import { CLIENT_TIMEOUT_MS } from '../support/fault-proxy/fault-timing.js';
import { proxyUrl } from '../support/fault-proxy/index.js';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { heartbeatsOf, ManualClocks } from '@ddd-kit/id-generator/testing';
import { describeMachineIdProcesses, type ProcessesTarget } from './support/machine-id-processes.case.js';

/** The database's clock in epoch milliseconds, as the distributor reads it. */
const DB_NOW = 'floor(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * The statement that makes each operation's change: what a fault hits. Distribute is a short
 * transaction: a lost or late reply hits its COMMIT (the server committed), a resend its write.
 */
function statement(operation: Operation, kind: FaultKind): (request: { command: string }) => boolean {
  const sql =
    operation === 'distribute'
      ? kind === 'lost-then-resent'
        ? /INSERT INTO \S*machine_ids" AS m/
        : /^COMMIT$/
      : operation === 'guard'
        ? /SET\s+deadline_ms = GREATEST/
        : /^\s*WITH before AS/;
  return (request) => sql.test(request.command);
}

async function postgresTarget(): Promise<ProcessesTarget> {
  const schema = await postgresSchema('machine_ids');
  const pool = new pg.Pool({ connectionString: schema.url, max: 8 });
  const base = new PostgresMachineIdDistributor(pool, { schema: schema.schema });
  for (const ddl of base.ddl()) await pool.query(ddl);
  const { ids } = base.tables;
  const rows = async (sql: string, values: unknown[]) => (await pool.query(sql, values)).rows;
  return {
    create: (options) => new PostgresMachineIdDistributor(pool, { ...options, schema: schema.schema }),
    faulty: async (kind) => {
      const { proxy, url } = await proxyUrl('postgres', schema.url);
      const through = new pg.Pool({
        connectionString: url,
        max: 4,
        connectionTimeoutMillis: CLIENT_TIMEOUT_MS,
        query_timeout: CLIENT_TIMEOUT_MS,
      });
      through.on('error', () => undefined);
      return {
        create: (options) => new PostgresMachineIdDistributor(through, { ...options, schema: schema.schema }),
        inject: async (operation) => {
          const match = statement(operation, kind);
          // A late reply (timeout) is held until the client gave up and moved on, however slowly.
          const handle =
            kind === 'lost-then-resent'
              ? proxy.duplicateRequest({ match })
              : kind === 'lost'
                ? proxy.dropReply({ match, then: 'cut' })
                : proxy.holdReply({ match });
          await handle.fired;
        },
        blackhole: () => proxy.blackhole(),
        heal: () => proxy.heal({ reset: true }),
        close: async () => {
          await through.end();
          await proxy.close();
        },
      };
    },
    owner: async (namespace, machineId) =>
      (await rows(`SELECT instance_id FROM ${ids} WHERE namespace = $1 AND machine_id = $2`, [namespace, machineId]))[0]
        ?.instance_id ?? null,
    heldBy: async (namespace, instanceId) =>
      (
        await rows(`SELECT machine_id FROM ${ids} WHERE namespace = $1 AND instance_id = $2 ORDER BY machine_id`, [
          namespace,
          instanceId,
        ])
      ).map((r) => r.machine_id),
    released: async (namespace) =>
      (
        await rows(`SELECT machine_id FROM ${ids} WHERE namespace = $1 AND instance_id IS NULL ORDER BY machine_id`, [
          namespace,
        ])
      ).map((r) => r.machine_id),
    deadline: async (namespace, machineId) => {
      const row = (
        await rows(`SELECT deadline_ms FROM ${ids} WHERE namespace = $1 AND machine_id = $2`, [namespace, machineId])
      )[0];
      return row?.deadline_ms == null ? null : Number(row.deadline_ms);
    },
    floor: async (namespace, machineId) =>
      Number(
        (
          await rows(`SELECT last_timestamp FROM ${ids} WHERE namespace = $1 AND machine_id = $2`, [
            namespace,
            machineId,
          ])
        )[0]?.last_timestamp ?? 0,
      ),
    cleanup: async () => undefined, // the schema is dropped
    close: async () => {
      await pool.end();
      await schema.drop();
    },
    worker: { kind: 'postgres', url: schema.url, schema: schema.schema },
  };
}

describeMachineIdDistributorContract('PostgreSQL', postgresTarget);
describeMachineIdProcesses('PostgreSQL', postgresTarget);

describe('PostgresMachineIdDistributor', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    schema = await postgresSchema('machine_ids_pg');
    pool = new pg.Pool({ connectionString: schema.url, max: 8 });
  });

  afterAll(async () => {
    await pool.end();
    await schema.drop();
  });

  it('creates its tables on first use, also when many instances start at once; createTables: false leaves that to a migration', async () => {
    const distributors = Array.from(
      { length: 6 },
      () => new PostgresMachineIdDistributor(pool, { schema: schema.schema, tablePrefix: 'first_use_' }),
    );
    const held = await Promise.all(
      distributors.map((d, i) => d.distribute({ namespace: 'n', machineBits: 4, instanceId: `i${i}` })),
    );
    expect(new Set(held.map((h) => h.machineId)).size).toBe(6);
    const tables = (
      await pool.query(
        `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'first_use_%' ORDER BY 1`,
        [schema.schema],
      )
    ).rows;
    expect(tables.map((t) => t.tablename)).toEqual(['first_use_machine_id_namespaces', 'first_use_machine_ids']);

    const manual = new PostgresMachineIdDistributor(pool, {
      schema: schema.schema,
      tablePrefix: 'migrated_',
      createTables: false,
    });
    await expect(manual.distribute({ namespace: 'n', machineBits: 4, instanceId: 'x' })).rejects.toThrow(
      /does not exist/,
    );
    for (const ddl of manual.ddl()) await pool.query(ddl);
    expect((await manual.distribute({ namespace: 'n', machineBits: 4, instanceId: 'x' })).machineId).toBe(0);
  });

  it('never joins a transaction the caller has open: a lease taken inside one outlives its rollback', async () => {
    const storage = ((globalThis as any)[Symbol.for('@ddd-kit/pg-ambient-transaction')] ??=
      new AsyncLocalStorage<unknown>()) as AsyncLocalStorage<unknown>;
    const distributor = new PostgresMachineIdDistributor(pool, { schema: schema.schema, tablePrefix: 'ambient_' });
    await distributor.revert({ namespace: 'n', machineBits: 4, instanceId: 'warm-up', machineId: 0, lastTimestamp: 0 }); // tables
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const held = await storage.run({ pool, client }, () =>
        distributor.distribute({ namespace: 'n', machineBits: 4, instanceId: 'in-tx' }),
      );
      await client.query('ROLLBACK');
      const owner = (
        await pool.query(
          `SELECT instance_id FROM ${distributor.tables.ids} WHERE namespace = 'n' AND machine_id = $1`,
          [held.machineId],
        )
      ).rows[0];
      expect(owner?.instance_id).toBe('in-tx');
    } finally {
      client.release();
    }
  });

  it('decides deadlines by the database clock: a holder whose own clock runs a minute fast still loses its ID once the database says its lease passed', async () => {
    const fast = new PostgresMachineIdDistributor(pool, {
      schema: schema.schema,
      tablePrefix: 'clock_',
      safeGuardMs: 100,
      guardIntervalMs: 30,
      clock: () => Date.now() + 60_000,
    });
    const other = new PostgresMachineIdDistributor(pool, {
      schema: schema.schema,
      tablePrefix: 'clock_',
      safeGuardMs: 60_000,
      maxClockWaitMs: 0,
    });
    await other.distribute({ namespace: 'n', machineBits: 1, instanceId: 'busy' });
    const held = await fast.distribute({ namespace: 'n', machineBits: 1, instanceId: 'fast' });
    const row = (
      await pool.query(`SELECT deadline_ms, bound_ms, ${DB_NOW} AS now FROM ${fast.tables.ids} WHERE machine_id = $1`, [
        held.machineId,
      ])
    ).rows[0];
    expect(Number(row.deadline_ms) - Number(row.now)).toBeLessThanOrEqual(100); // by the database clock
    expect(Number(row.bound_ms) - Date.now()).toBeGreaterThan(59_000); // by the holder's clock
    // A newcomer may take it once the database clock passes the deadline (refused until then),
    // and must then start after the fast holder's bound: 60 s ahead of its own clock, more than
    // it may wait.
    const newcomer = await waitFor("the fast holder's ID free by the database clock", () =>
      other.distribute({ namespace: 'n', machineBits: 1, instanceId: 'newcomer' }).then(
        (taken) => ({ taken }),
        (error: unknown) => (error instanceof MachineIdOverflowError ? undefined : { error }),
      ),
    );
    expect(newcomer).toEqual({
      error: expect.objectContaining({ message: expect.stringMatching(/ahead of this clock/) }),
    });
  });

  it('a heartbeat that commits while a newcomer is taking the ID wins: the newcomer chooses again and does not take a renewed lease', async () => {
    const distributor = new PostgresMachineIdDistributor(pool, {
      schema: schema.schema,
      tablePrefix: 'race_',
      safeGuardMs: 100,
      guardIntervalMs: 30,
    });
    const long = new PostgresMachineIdDistributor(pool, {
      schema: schema.schema,
      tablePrefix: 'race_',
      safeGuardMs: 60_000,
    });
    await long.distribute({ namespace: 'n', machineBits: 1, instanceId: 'busy' });
    const held = await distributor.distribute({ namespace: 'n', machineBits: 1, instanceId: 'holder' });
    const { ids } = distributor.tables;
    await waitFor("the holder's deadline passed by the database clock (nobody takes the ID meanwhile)", async () => {
      const row = (
        await pool.query(`SELECT deadline_ms < ${DB_NOW} AS passed FROM ${ids} WHERE machine_id = $1`, [held.machineId])
      ).rows[0];
      return row.passed === true;
    });
    // The holder's heartbeat runs, holding the row, before the newcomer looks: the newcomer still
    // sees the old (passed) deadline, picks the ID, and waits for the row.
    const heartbeat = await pool.connect();
    try {
      await heartbeat.query('BEGIN');
      // Renewed for a minute: however late the newcomer looks again, the lease is still held (a
      // 100 ms renewal could lapse first on a loaded machine, and the newcomer then rightly took it).
      const renewed = await heartbeat.query(sql.guard(distributor.tables), [
        'n',
        held.machineId,
        'holder',
        60_000,
        Date.now() + 60_000,
        Date.now(),
      ]);
      expect(renewed.rowCount).toBe(1);
      const newcomer = long.distribute({ namespace: 'n', machineBits: 1, instanceId: 'newcomer' }).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      await waitFor('the newcomer waiting for the row the heartbeat holds', async () => {
        const waiting = await pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [`%INSERT INTO ${ids} AS m%`],
        );
        return waiting.rowCount === 1;
      });
      await heartbeat.query('COMMIT');
      const outcome = (await newcomer) as { value?: unknown; error?: unknown };
      expect(outcome.error).toBeInstanceOf(MachineIdOverflowError);
    } finally {
      heartbeat.release();
    }
    const owner = (
      await pool.query(`SELECT instance_id FROM ${distributor.tables.ids} WHERE namespace = 'n' AND machine_id = $1`, [
        held.machineId,
      ])
    ).rows[0];
    expect(owner.instance_id).toBe('holder');
  });
});

describe('PostgresMachineIdDistributor under request traffic', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;

  beforeAll(async () => {
    schema = await postgresSchema('machine_ids_starved');
  });
  afterAll(async () => {
    await schema?.drop();
  });

  it('keeps the lease renewed while requests hold every connection of the pool in a transaction', async () => {
    // Before: the heartbeat waited for a pooled connection behind the requests, and the lease ran out.
    const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    const clocks = new ManualClocks();
    const distributor = new PostgresMachineIdDistributor(pool, {
      schema: schema.schema,
      safeGuardMs: 1_500,
      guardIntervalMs: 100,
      clock: clocks.now,
    });
    const heartbeats = heartbeatsOf(distributor, clocks);
    const holder = await MachineIdHolder.acquire({
      distributor,
      namespace: 'starved',
      machineBits: 4,
      instanceId: 'busy',
      ...clocks.holderClocks,
      logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
    });
    const held = await Promise.all([pool.connect(), pool.connect()]);
    try {
      for (const client of held) await client.query('BEGIN');
      // Every pooled connection is taken: a request would wait now. The holder's clocks move on
      // by more than three leases (1,350 ms each), a second at a time, and after each second a
      // heartbeat goes through; one queued behind the requests would never complete.
      for (let second = 1; second <= 5; second++) {
        clocks.advance(1_000);
        await waitFor(`a heartbeat sent after second ${second}`, heartbeats.sentSince(clocks.monotonic()));
        expect(holder.lease.valid).toBe(true);
      }
    } finally {
      for (const client of held) {
        await client.query('ROLLBACK');
        client.release();
      }
      expect(await holder.release()).toBe(true);
      await pool.end();
    }
  });
});
