// PostgresRepository inside transactions: runInTransaction here, @Transactional in a Nest
// application (a child process: Jest on Node 20 cannot load nestjs-cls, see child-app.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSyncEventBus, OptimisticLockError, type DataSyncEvent, type PostgresStatement } from '@ddd-kit/repository';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { ChildApp } from '../support/child-app.js';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';
import { observedPool } from './support/postgres.support.js';

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
/** Another pool: what it reads is outside any transaction started from `pool`. */
let otherPool: pg.Pool;
let tables = 0;

beforeAll(async () => {
  schema = await postgresSchema('repository_tx');
  pool = new pg.Pool({ connectionString: schema.url, max: 8 });
  otherPool = new pg.Pool({ connectionString: schema.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await otherPool?.end();
  await schema?.drop();
});

function setup(on: pg.Pool = pool) {
  const bus = new DataSyncEventBus();
  const published: string[] = [];
  bus.subscribe(
    Counter,
    (events: readonly DataSyncEvent[]) => void published.push(...events.map((e) => `${e.type}@${e.version}:${e.id}`)),
  );
  const table = `tx_${++tables}`;
  const repository = new CounterPostgresRepository({ pool: on, table, aggregate: Counter, publisher: bus });
  // Reads around the transaction: another pool never joins a transaction of `pool` (it says so).
  const outside = new CounterPostgresRepository({
    pool: otherPool,
    table,
    aggregate: Counter,
    foreignTransaction: 'autocommit',
  });
  return { repository, outside, published, table, bus };
}

/** Resolves once another session is waiting for a lock to write `table` (a row lock the caller's transaction holds). */
function anotherWriterWaits(table: string): Promise<unknown> {
  return waitFor(`another transaction to wait for a lock on ${table}`, async () => {
    const { rows } = await otherPool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
      [`UPDATE "${table}"%`],
    );
    return rows[0].n > 0;
  });
}

describe('PostgresRepository in runInTransaction', () => {
  it('a write in a transaction that throws afterwards leaves nothing, and publishes nothing', async () => {
    const { repository, outside, published } = setup();
    await expect(
      runInTransaction(pool, async () => {
        const counter = new Counter('t1', 'doomed');
        await repository.insert(counter);
        counter.increment();
        await repository.update(counter);
        // Inside, the transaction sees its own writes; outside, nobody does.
        expect(await repository.currentVersion('t1')).toBe(2);
        expect(await outside.currentVersion('t1')).toBe(-1);
        throw new Error('the use case fails after the writes');
      }),
    ).rejects.toThrow('the use case fails after the writes');
    expect(await outside.currentVersion('t1')).toBe(-1);
    expect(published).toEqual([]);
  });

  it('a committed transaction publishes its events after COMMIT, in order; handlers see the rows committed', async () => {
    const { repository, outside, published, bus } = setup();
    const seenByHandler: number[] = [];
    bus.subscribe(
      Counter,
      async (events: readonly DataSyncEvent[]) =>
        void seenByHandler.push(await outside.currentVersion(events[0].id as string)),
    );
    await runInTransaction(pool, async () => {
      const counter = new Counter('t2', 'kept');
      await repository.insert(counter);
      counter.increment();
      await repository.update(counter);
      expect(published).toEqual([]);
    });
    expect(published).toEqual(['UPSERT@1:t2', 'UPSERT@2:t2']);
    // Both handlers ran after COMMIT: another connection already saw the final version.
    expect(seenByHandler).toEqual([2, 2]);
  });

  it('its statements run in the transaction: no BEGIN of its own (even with statements that must commit with the write), the same xid', async () => {
    const observed = observedPool(pool);
    const { table } = setup();
    class Audited extends CounterPostgresRepository {
      protected override statementsToCommitWith(counter: Counter): readonly PostgresStatement[] {
        return [{ text: `INSERT INTO "${table}_audit" VALUES ($1, $2)`, values: [counter.id, counter.newVersion] }];
      }
    }
    await pool.query(`CREATE TABLE "${table}_audit" (id text, version bigint)`);
    const repository = new Audited({ pool: observed.pool, table, aggregate: Counter });
    await repository.ensureTable();
    observed.sent.length = 0;
    let xid = '';
    await runInTransaction(observed.pool, async (client) => {
      xid = (await client.query('SELECT txid_current()::text AS x')).rows[0].x;
      await repository.insert(new Counter('t3', 'joined'));
    });
    expect(observed.sent.map((s) => s.text.split(' ')[0])).toEqual(['BEGIN', 'SELECT', 'INSERT', 'INSERT', 'COMMIT']);
    const xmin = async (t: string) =>
      (await pool.query(`SELECT xmin::text AS x FROM "${t}" WHERE id = 't3'`)).rows[0].x;
    expect(await xmin(table)).toBe(String(Number(xid) % 2 ** 32));
    expect(await xmin(`${table}_audit`)).toBe(await xmin(table));
  });

  it('requiresNew: a write in an inner transaction survives the outer rollback; its events are published at its own commit', async () => {
    const { repository, outside, published } = setup();
    await expect(
      runInTransaction(pool, async () => {
        await repository.insert(new Counter('outer', 'x'));
        await runInTransaction(pool, () => repository.insert(new Counter('inner', 'x')), {
          propagation: 'requiresNew',
        });
        expect(published).toEqual(['UPSERT@1:inner']);
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect([await outside.currentVersion('outer'), await outside.currentVersion('inner')]).toEqual([-1, 1]);
    expect(published).toEqual(['UPSERT@1:inner']);
  });

  it('two transactions updating one aggregate from the same version: the second waits for the first, then gets OptimisticLockError; exactly one commits', async () => {
    const { repository, outside, table } = setup();
    await repository.insert(new Counter('t4', 'contended'));
    let bothLoaded!: () => void;
    const loaded = new Promise<void>((resolve) => (bothLoaded = resolve));
    let count = 0;
    const increment = (by: number) =>
      runInTransaction(pool, async () => {
        const counter = (await repository.findById('t4'))!;
        if (++count === 2) bothLoaded();
        await loaded;
        counter.increment(by);
        await repository.update(counter);
        // Hold the row lock until the other transaction really waits on it.
        await anotherWriterWaits(table);
      });
    const results = await Promise.allSettled([increment(1), increment(10)]);
    const rejected = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(rejected).toHaveLength(1);
    expect(rejected[0].reason).toBeInstanceOf(OptimisticLockError);
    const final = (await outside.findById('t4'))!;
    expect(final.oldVersion).toBe(2);
    expect([1, 10]).toContain(final.count);
  });

  it("under REPEATABLE READ the loser of that race gets the server's serialization failure (40001) instead: retry the whole transaction", async () => {
    const { repository, outside, table } = setup();
    await repository.insert(new Counter('t5', 'contended'));
    let bothStarted!: () => void;
    const started = new Promise<void>((resolve) => (bothStarted = resolve));
    let count = 0;
    const increment = () =>
      runInTransaction(
        pool,
        async () => {
          const counter = (await repository.findById('t5'))!;
          if (++count === 2) bothStarted();
          await started;
          counter.increment();
          await repository.update(counter);
          await anotherWriterWaits(table);
        },
        { isolationLevel: 'REPEATABLE READ' },
      );
    const results = await Promise.allSettled([increment(), increment()]);
    const rejected = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(rejected).toHaveLength(1);
    expect(rejected[0].reason).toMatchObject({ code: '40001' });
    expect((await outside.findById('t5'))!.oldVersion).toBe(2);
  });

  it('a table created on first use inside a transaction that rolls back is still there afterwards', async () => {
    const { repository, outside, table } = setup();
    await expect(
      runInTransaction(pool, async () => {
        await repository.insert(new Counter('t6', 'x'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await otherPool.query('SELECT to_regclass($1) IS NOT NULL AS present', [table])).rows[0].present).toBe(
      true,
    );
    expect(await outside.currentVersion('t6')).toBe(-1);
    await repository.insert(new Counter('t6', 'x'));
    expect(await outside.currentVersion('t6')).toBe(1);
  });
});

describe('PostgresRepository with @Transactional (Nest application, module-owned pool)', () => {
  const FIXTURE = new URL('./support/transactional-repository.fixture.mjs', import.meta.url);
  const TABLE = 'nest_counters';
  let app: ChildApp;
  let outside: CounterPostgresRepository;

  beforeAll(async () => {
    app = await ChildApp.start(FIXTURE, { FIXTURE_DATABASE_URL: schema.url, FIXTURE_TABLE: TABLE }, [
      'libs/transactional-adapter-pg',
      'libs/repository',
    ]);
    outside = new CounterPostgresRepository({ pool: otherPool, table: TABLE, aggregate: Counter });
  });
  afterAll(async () => {
    // Exits only once the module closed its pool (an open pool keeps a process alive).
    if (app) expect(await app.stop()).toBe(0);
  });

  it('a use case that throws after its writes leaves nothing and tells the read model nothing', async () => {
    await expect(app.call('create', 'n1', true)).rejects.toThrow('use case failed after the write');
    expect(await outside.currentVersion('n1')).toBe(-1);
    expect(await app.call('received')).toEqual([]);
  });

  it('a use case that commits reaches the read model after COMMIT', async () => {
    await app.call('create', 'n2', false);
    await app.call('increment', 'n2', false);
    expect(await outside.currentVersion('n2')).toBe(2);
    expect(await app.call('received')).toEqual(['UPSERT@1:n2', 'UPSERT@2:n2']);
    await expect(app.call('increment', 'n2', true)).rejects.toThrow('use case failed after the write');
    expect(await outside.currentVersion('n2')).toBe(2);
    expect(await app.call('received')).toEqual([]);
  });

  it('handlers run after the commit with no transaction left in the CLS context', async () => {
    await app.call('handlersInTransaction');
    await app.call('create', 'n8', false);
    await app.call('increment', 'n8', false);
    expect(await app.call('received')).toEqual(['UPSERT@1:n8', 'UPSERT@2:n8']);
    expect(await app.call('handlersInTransaction')).toEqual([false, false]);
  });

  it('NOT_SUPPORTED: a write there autocommits and is published at once, whatever the enclosing transaction does', async () => {
    await expect(app.call('failAfterNotSupported', 'n7')).rejects.toThrow('outer failed');
    expect(await outside.currentVersion('n7')).toBe(1);
    expect(await app.call('received')).toEqual(['UPSERT@1:n7']);
  });

  it('txHost.tx and the repository are one transaction: each sees what the other wrote', async () => {
    await app.call('create', 'n3', false);
    await app.call('received');
    await expect(app.call('peek', 'n3')).rejects.toMatchObject({ code: 'seen:1' });
    expect((await outside.findById('n3'))!.count).toBe(0);
  });

  it('NESTED: a failed nested use case is undone with its events; the enclosing one commits with its own', async () => {
    await app.call('create', 'n4', false);
    await app.call('received');
    await app.call('withFailedNested', 'n4');
    const stored = (await outside.findById('n4'))!;
    expect([stored.count, stored.oldVersion]).toEqual([1, 2]);
    expect(await app.call('received')).toEqual(['UPSERT@2:n4']);
  });

  it('transactions racing on one aggregate from the same version: exactly one commits, the others get OptimisticLockError', async () => {
    await app.call('create', 'n5', false);
    await app.call('received');
    const results = await app.call<string[]>('race', 'n5', 4);
    expect(results.filter((r) => r === 'committed')).toHaveLength(1);
    expect(results.filter((r) => r === 'OptimisticLockError')).toHaveLength(3);
    expect(await outside.currentVersion('n5')).toBe(2);
    expect(await app.call('received')).toEqual(['UPSERT@2:n5']);
  });

  it('8 concurrent use cases × 10 increments, each transaction retried on conflict: exactly 80, one event per commit', async () => {
    await app.call('create', 'n6', false);
    await app.call('received');
    await app.call('contend', 'n6', 8, 10);
    const stored = (await outside.findById('n6'))!;
    expect([stored.count, stored.oldVersion]).toEqual([80, 81]);
    const received = await app.call<string[]>('received');
    expect(received).toHaveLength(80);
    expect(new Set(received).size).toBe(80);
  });
});

describe('the adapter on another pool than the repository (SPEC §5)', () => {
  const FIXTURE = new URL('./support/transactional-repository.fixture.mjs', import.meta.url);
  const TABLE = 'other_pool_counters';
  let app: ChildApp;
  let outside: CounterPostgresRepository;

  beforeAll(async () => {
    app = await ChildApp.start(
      FIXTURE,
      { FIXTURE_DATABASE_URL: schema.url, FIXTURE_TABLE: TABLE, FIXTURE_MODE: 'other-pool' },
      ['libs/transactional-adapter-pg', 'libs/repository'],
    );
    outside = new CounterPostgresRepository({ pool: otherPool, table: TABLE, aggregate: Counter });
  });
  afterAll(async () => {
    if (app) expect(await app.stop()).toBe(0);
  });

  it('a @Transactional use case fails naming both pools, and nothing commits on its own', async () => {
    // Before: the insert autocommitted on the repository's pool, and the use case's rollback left it there.
    const error = await app.call('create', 'o1', true).catch((e: Error & { code?: string }) => e);
    expect(error).toMatchObject({ code: 'PG_FOREIGN_TRANSACTION' });
    expect((error as Error).message).toMatch(
      /CounterRepository runs on pg\.Pool #\d+ .*transaction started from pg\.Pool #\d+/,
    );
    expect(await outside.currentVersion('o1')).toBe(-1);
    await expect(app.call('create', 'o2', false)).rejects.toMatchObject({ code: 'PG_FOREIGN_TRANSACTION' });
    expect(await outside.currentVersion('o2')).toBe(-1);
  });
});
