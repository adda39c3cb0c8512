// What is particular to PostgresRepository beyond the shared contract: the statements it sends,
// its DDL, identifier checks, values that look like SQL, id types, the seam for statements
// that must commit with a write, and what a caller sees when the network fails.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  AggregateRoot,
  DataSyncEventBus,
  InvalidAggregateIdError,
  OptimisticLockError,
  PostgresRepository,
  RepositoryConfigurationError,
  RepositoryError,
  type DataSyncEvent,
  type PostgresStatement,
  type PostgresWriteOperation,
  type StoredRow,
} from '@ddd-kit/repository';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { Counter, CounterPostgresRepository, type CounterFields } from './support/counter.aggregate.js';
import { observedPool } from './support/postgres.support.js';

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
let tables = 0;
const nextTable = (): string => `t_${++tables}`;

beforeAll(async () => {
  schema = await postgresSchema('postgres_repository');
  pool = new pg.Pool({ connectionString: schema.url, max: 8 });
});
afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

function counters(
  options: { pool?: pg.Pool; table?: string; createTables?: boolean; publisher?: DataSyncEventBus } = {},
): CounterPostgresRepository {
  return new CounterPostgresRepository({ pool, table: nextTable(), aggregate: Counter, ...options });
}

async function rowsOf(table: string): Promise<Record<string, unknown>[]> {
  return (await pool.query(`SELECT * FROM "${table}" ORDER BY 1`)).rows;
}

describe('PostgresRepository: statements', () => {
  it('sends one statement per operation, every value as a parameter', async () => {
    const table = nextTable();
    const observed = observedPool(pool);
    const repository = counters({ pool: observed.pool, table });
    await repository.ensureTable();
    const sent = async (operation: () => Promise<unknown>) => {
      observed.sent.length = 0;
      await operation().catch(() => undefined);
      return observed.sent.map((s) => (s.values === undefined ? [s.text] : [s.text, s.values]));
    };
    const T = `"${table}"`;

    const counter = new Counter('rt', "it's");
    expect(await sent(() => repository.insert(counter))).toEqual([
      [
        `INSERT INTO ${T} ("id", "version", "label", "count", "tags") VALUES ($1, $2, $3, $4, $5) ON CONFLICT ("id") DO NOTHING`,
        ['rt', 1, "it's", 0, '[]'],
      ],
    ]);
    counter.increment();
    counter.tags.push('a');
    expect(await sent(() => repository.update(counter))).toEqual([
      [
        `UPDATE ${T} SET "label" = $3, "count" = $4, "tags" = $5, "version" = $6 WHERE "id" = $1 AND "version" = $2`,
        ['rt', 1, "it's", 1, '["a"]', 2],
      ],
    ]);
    expect(await sent(() => repository.findById('rt'))).toEqual([
      [`SELECT "id" AS "id", "version" AS "version", "label", "count", "tags" FROM ${T} WHERE "id" = $1`, ['rt']],
    ]);
    expect(await sent(() => repository.currentVersion('rt'))).toEqual([
      [`SELECT "version" AS "version" FROM ${T} WHERE "id" = $1`, ['rt']],
    ]);
    const stale = (await repository.findById('rt'))!;
    await repository.update((await repository.findById('rt'))!);
    // A conflict is the same single statement; zero rows is the answer.
    expect(await sent(() => repository.update(stale))).toHaveLength(1);
    expect(await sent(() => repository.remove(stale))).toEqual([
      [`DELETE FROM ${T} WHERE "id" = $1 AND "version" = $2`, ['rt', 2]],
    ]);
    // A refused id sends nothing at all.
    expect(await sent(() => repository.findById({ $ne: null } as unknown as string))).toEqual([]);
    expect(await sent(() => repository.currentVersion(7 as unknown as string))).toEqual([]);
  });
});

describe('PostgresRepository: prepared statements', () => {
  /** The statements the server holds prepared for the one connection of `onePool`, with how often each ran. */
  async function preparedOn(onePool: pg.Pool): Promise<Array<{ statement: string; runs: number }>> {
    const { rows } = await onePool.query(
      'SELECT statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements ORDER BY statement',
    );
    return rows.map((row) => ({ statement: row.statement, runs: Number(row.runs) }));
  }

  /** Runs `fn` on a pool of one connection (what the server prepared is then that connection's), ended after. */
  async function onOneConnection(fn: (onePool: pg.Pool) => Promise<void>): Promise<void> {
    const onePool = new pg.Pool({ connectionString: schema.url, max: 1 });
    try {
      await fn(onePool);
    } finally {
      await onePool.end();
    }
  }

  it('its own statements are prepared: parsed once per connection, then run by name', async () => {
    await onOneConnection(async (onePool) => {
      const table = nextTable();
      const repository = counters({ pool: onePool, table });
      await repository.ensureTable();
      const counter = new Counter('p', 'prepared');
      await repository.insert(counter);
      for (let i = 0; i < 10; i++) {
        counter.increment();
        await repository.update(counter);
      }
      expect((await repository.findById('p'))?.count).toBe(10);
      expect(await repository.currentVersion('p')).toBe(11);
      const prepared = await preparedOn(onePool);
      const runsOf = (start: string) => prepared.find((p) => p.statement.startsWith(start))?.runs;
      expect(runsOf(`INSERT INTO "${table}"`)).toBe(1);
      expect(runsOf(`UPDATE "${table}"`)).toBe(10); // one Parse, ten runs
      expect(runsOf('SELECT "id" AS "id"')).toBe(1);
      expect(runsOf('SELECT "version" AS "version"')).toBe(1);
    });
  });

  it('preparedStatements: false sends every statement unnamed (a pooler that keeps none)', async () => {
    await onOneConnection(async (onePool) => {
      const observed = observedPool(onePool);
      const table = nextTable();
      const repository = new CounterPostgresRepository({
        pool: observed.pool,
        table,
        aggregate: Counter,
        preparedStatements: false,
      });
      await repository.ensureTable();
      const counter = new Counter('u', 'unnamed');
      await repository.insert(counter);
      counter.increment();
      await repository.update(counter);
      await repository.findById('u');
      expect(observed.sent.length).toBeGreaterThanOrEqual(3);
      expect(observed.sent.filter((s) => s.name !== undefined)).toEqual([]);
      expect(await preparedOn(onePool)).toEqual([]);
    });
  });

  it('a column added while statements are prepared changes nothing they return', async () => {
    await onOneConnection(async (onePool) => {
      const table = nextTable();
      const repository = counters({ pool: onePool, table });
      await repository.ensureTable();
      const counter = new Counter('m', 'migrated');
      await repository.insert(counter);
      expect((await repository.findById('m'))?.label).toBe('migrated');
      await pool.query(`ALTER TABLE "${table}" ADD COLUMN note text`);
      counter.increment();
      await repository.update(counter);
      expect((await repository.findById('m'))?.count).toBe(1);
    });
  });

  it("a subclass's own statements (query) stay unnamed: their text is the subclass's", async () => {
    const observed = observedPool(pool);
    class Lookup extends CounterPostgresRepository {
      byLabel(label: string) {
        return this.query({ text: `SELECT id FROM ${this.qualifiedTable} WHERE label = $1`, values: [label] });
      }
    }
    const repository = new Lookup({ pool: observed.pool, table: nextTable(), aggregate: Counter });
    await repository.insert(new Counter('q', 'looked-up'));
    observed.sent.length = 0;
    expect((await repository.byLabel('looked-up')).rows).toEqual([{ id: 'q' }]);
    expect(observed.sent).toHaveLength(1);
    expect(observed.sent[0].name).toBeUndefined();
  });
});

describe('PostgresRepository: the table', () => {
  it('createTableStatement() is the DDL first use runs: id primary key, version ≥ 1, the declared columns', async () => {
    const table = nextTable();
    const repository = counters({ table });
    expect(repository.createTableStatement()).toBe(
      `CREATE TABLE IF NOT EXISTS "${table}" (\n` +
        '  "id" text PRIMARY KEY,\n' +
        '  "version" bigint NOT NULL CHECK ("version" >= 1),\n' +
        '  "label" text NOT NULL,\n' +
        '  "count" integer NOT NULL,\n' +
        '  "tags" jsonb NOT NULL\n' +
        ')',
    );
    expect((await pool.query('SELECT to_regclass($1) AS t', [table])).rows[0].t).toBeNull();
    await repository.insert(new Counter('first', 'use'));
    const columns = await pool.query(
      'SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
      [schema.schema, table],
    );
    expect(columns.rows).toEqual([
      { column_name: 'id', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'version', data_type: 'bigint', is_nullable: 'NO' },
      { column_name: 'label', data_type: 'text', is_nullable: 'NO' },
      { column_name: 'count', data_type: 'integer', is_nullable: 'NO' },
      { column_name: 'tags', data_type: 'jsonb', is_nullable: 'NO' },
    ]);
    await expect(pool.query(`INSERT INTO "${table}" VALUES ('v0', 0, 'x', 0, '[]')`)).rejects.toMatchObject({
      code: '23514',
    });
  });

  it('createTables: false creates nothing; a missing table is a RepositoryConfigurationError naming it; the DDL by hand makes it work', async () => {
    const table = nextTable();
    const repository = counters({ table, createTables: false });
    const error = await repository.insert(new Counter('x', 'x')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RepositoryConfigurationError);
    expect((error as Error).message).toContain(`"${table}" does not exist`);
    // It says how to create it: the DDL to run.
    expect((error as Error).message).toContain(`CREATE TABLE IF NOT EXISTS "${table}"`);
    await expect(repository.findById('x')).rejects.toBeInstanceOf(RepositoryConfigurationError);
    expect((await pool.query('SELECT to_regclass($1) AS t', [table])).rows[0].t).toBeNull();

    await pool.query(repository.createTableStatement());
    const counter = new Counter('x', 'x');
    await repository.insert(counter);
    expect(await repository.currentVersion('x')).toBe(1);
  });

  it('ensureTable() creates the table on demand, even where first use would not', async () => {
    const table = nextTable();
    const repository = counters({ table, createTables: false });
    await repository.ensureTable();
    await repository.ensureTable();
    expect((await pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [table])).rows[0].present).toBe(true);
  });

  it('many instances using a new table at once: it is created once and no write fails', async () => {
    // Eight instances (a connection each) race on a new table, five times over: the loser of a
    // CREATE TABLE race meets one of three errors, each of which means "it exists now".
    const pools = Array.from({ length: 8 }, () => new pg.Pool({ connectionString: schema.url, max: 1 }));
    try {
      await Promise.all(pools.map((p) => p.query('SELECT 1')));
      for (let round = 0; round < 5; round++) {
        const table = nextTable();
        const repositories = pools.map((p) => counters({ pool: p, table }));
        await Promise.all(repositories.map((repository, i) => repository.insert(new Counter(`c${i}`, 'racing'))));
        expect((await rowsOf(table)).map((r) => r.id)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('a table another session is creating at this very moment: first use waits for it and goes on, no error', async () => {
    const table = nextTable();
    // Another instance's CREATE TABLE, not yet committed: invisible to the check, in the way of the creation.
    const other = await pool.connect();
    try {
      const { pid } = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0];
      await other.query('BEGIN');
      await other.query(counters({ table }).createTableStatement());
      const repositories = [0, 1, 2].map(() => counters({ table }));
      const writes = Promise.all(
        repositories.map((repository, i) => repository.insert(new Counter(`w${i}`, 'waited'))),
      );
      // Committed once a first use is stuck behind it (the server says who blocks whom).
      await waitFor('the first use to wait for the other CREATE TABLE', async () => {
        const { rows } = await pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [pid],
        );
        return rows[0].n > 0;
      });
      await other.query('COMMIT');
      await writes;
    } finally {
      other.release();
    }
    expect((await rowsOf(table)).map((r) => r.id)).toEqual(['w0', 'w1', 'w2']);
  });

  it('reserved words are fine as table and column names (they are quoted); a schema-qualified table works', async () => {
    class Order extends AggregateRoot<string> {
      constructor(
        id: string,
        public user: string,
        public select: number,
      ) {
        super(id);
      }
    }
    type OrderRow = { user: string; select: number };
    class OrderRepository extends PostgresRepository<string, Order, OrderRow> {
      protected readonly table = `${schema.schema}.order`;
      protected readonly columns = { user: 'text NOT NULL', select: 'integer NOT NULL' };
      protected toRow(order: Order): OrderRow {
        return { user: order.user, select: order.select };
      }
      protected toAggregate(row: StoredRow<string, OrderRow>): Order {
        return new Order(row.id, row.user, row.select);
      }
    }
    const repository = new OrderRepository({ pool, aggregate: Order });
    const order = new Order('o1', 'ann', 3);
    await repository.insert(order);
    order.select = 4;
    await repository.update(order);
    const loaded = (await repository.findById('o1'))!;
    expect([loaded.user, loaded.select, loaded.oldVersion]).toEqual(['ann', 4, 2]);
    expect((await pool.query(`SELECT "user", "select", version FROM "${schema.schema}"."order"`)).rows).toEqual([
      { user: 'ann', select: 4, version: '2' },
    ]);
  });
});

describe('PostgresRepository: identifiers and declarations', () => {
  const BAD_NAMES: Array<[string, unknown]> = [
    ['an injection', 'counters; DROP TABLE counters'],
    ['a quote', 'counters"'],
    ['three parts', 'a.b.c'],
    ['an empty part', 'a.'],
    ['a leading digit', '1counters'],
    ['a space', 'my counters'],
    ['a dash', 'my-counters'],
    ['a non-ASCII letter', 'zähler'],
    ['64 characters', 'x'.repeat(64)],
    ['an empty string', ''],
    ['a number', 7],
  ];

  it.each(BAD_NAMES)('refuses %s as a table, before anything is sent', async (_what, name) => {
    const observed = observedPool(pool);
    expect(
      () => new CounterPostgresRepository({ pool: observed.pool, table: name as string, aggregate: Counter }),
    ).toThrow(RepositoryConfigurationError);

    class Declared extends CounterPostgresRepository {
      protected override readonly table = name as string;
    }
    const declared = new Declared({ pool: observed.pool, aggregate: Counter });
    expect(() => declared.createTableStatement()).toThrow(RepositoryConfigurationError);
    await expect(declared.insert(new Counter('x', 'x'))).rejects.toBeInstanceOf(RepositoryConfigurationError);
    await expect(declared.findById('x')).rejects.toBeInstanceOf(RepositoryConfigurationError);
    expect(observed.sent).toEqual([]);
  });

  it('refuses bad columns, SQL in a column type, reserved columns and bad id/version columns', () => {
    const declaring = (overrides: {
      columns?: Record<string, unknown>;
      idColumn?: string;
      versionColumn?: string;
      idType?: string;
    }) => {
      class Declared extends CounterPostgresRepository {
        protected override readonly columns = (overrides.columns ?? {
          label: 'text',
          count: 'integer',
          tags: 'jsonb',
        }) as never;
        protected override get idColumn(): string {
          return overrides.idColumn ?? 'id';
        }
        protected override get versionColumn(): string {
          return overrides.versionColumn ?? 'version';
        }
        protected override get idType(): 'text' {
          return (overrides.idType ?? 'text') as 'text';
        }
      }
      return () => new Declared({ pool, table: nextTable() }).createTableStatement();
    };
    expect(declaring({})).not.toThrow();
    const refused = [
      { columns: { 'label; DROP TABLE x': 'text' } },
      { columns: { label: 'text; DROP TABLE x' } },
      { columns: { label: 'text -- comment' } },
      { columns: { label: 'text /* comment */' } },
      { columns: { label: '' } },
      { columns: { label: 42 } },
      { columns: { id: 'text' } },
      { columns: { version: 'integer' } },
      { columns: { revision: 'integer' }, versionColumn: 'revision' },
      { idColumn: 'bad id' },
      { versionColumn: 'id' },
      { idType: 'uuid' },
      { columns: [] as unknown as Record<string, unknown> },
    ];
    for (const overrides of refused) expect(declaring(overrides)).toThrow(RepositoryConfigurationError);
  });

  it('toRow must return exactly the declared columns: nothing is written otherwise', async () => {
    const table = nextTable();
    class Sloppy extends CounterPostgresRepository {
      mode: 'extra' | 'missing' = 'extra';
      protected override toRow(counter: Counter): CounterFields {
        const row = super.toRow(counter) as Partial<CounterFields> & Record<string, unknown>;
        if (this.mode === 'extra') row.secret = 'x';
        else delete row.tags;
        return row as CounterFields;
      }
    }
    const repository = new Sloppy({ pool, table, aggregate: Counter });
    await expect(repository.insert(new Counter('s', 's'))).rejects.toThrow(/not declared in columns: secret/);
    repository.mode = 'missing';
    await expect(repository.insert(new Counter('s', 's'))).rejects.toThrow(/missing: tags/);
    expect(await rowsOf(table)).toEqual([]);
  });
});

describe('PostgresRepository: values', () => {
  it('values that look like SQL, placeholders or operators are stored and read back verbatim', async () => {
    const table = nextTable();
    const repository = counters({ table });
    const hostile = [
      "x'); DROP TABLE counters; --",
      "' OR '1'='1",
      '$1',
      '$2::text',
      '\\x00\\',
      '{"$ne":null}',
      '"; DELETE FROM pg_class; --',
    ];
    for (const [i, label] of hostile.entries()) {
      const counter = new Counter(`h${i}`, label);
      counter.tags = [label, `${label}"]}`];
      await repository.insert(counter);
    }
    // An id that looks like SQL is a plain value too.
    await repository.insert(new Counter("id' OR 1=1 --", 'sly id'));
    for (const [i, label] of hostile.entries()) {
      const loaded = (await repository.findById(`h${i}`))!;
      expect([loaded.label, loaded.tags]).toEqual([label, [label, `${label}"]}`]]);
    }
    expect((await repository.findById("id' OR 1=1 --"))!.label).toBe('sly id');
    const raw = await rowsOf(table);
    expect(raw.map((r) => r.label).sort()).toEqual([...hostile, 'sly id'].sort());
    expect(await repository.currentVersion('h0')).toBe(1);
  });

  it('json/jsonb columns take the value itself (the repository serialises it): arrays, objects, strings, null', async () => {
    class Doc extends AggregateRoot<string> {
      constructor(
        id: string,
        public body: unknown,
      ) {
        super(id);
      }
    }
    class DocRepository extends PostgresRepository<string, Doc, { body: unknown }> {
      protected readonly table = nextTable();
      protected readonly columns = { body: 'jsonb' };
      protected toRow(doc: Doc) {
        return { body: doc.body };
      }
      protected toAggregate(row: StoredRow<string, { body: unknown }>) {
        return new Doc(row.id, row.body);
      }
    }
    const repository = new DocRepository({ pool, aggregate: Doc });
    const bodies = [['a', 1, null], { nested: { list: [1, 'two'] }, quote: "'" }, 'just a string', 42, true, null];
    for (const [i, body] of bodies.entries()) await repository.insert(new Doc(`d${i}`, body));
    for (const [i, body] of bodies.entries()) expect((await repository.findById(`d${i}`))!.body).toEqual(body);
  });
});

describe('PostgresRepository: ids', () => {
  class Ticket extends AggregateRoot<number> {
    constructor(
      id: number | undefined,
      public title: string,
    ) {
      super(id);
    }
  }
  class TicketRepository extends PostgresRepository<number, Ticket, { title: string }> {
    protected readonly table = nextTable();
    protected readonly columns = { title: 'text NOT NULL' };
    protected override get idType(): 'bigint' {
      return 'bigint';
    }
    protected toRow(ticket: Ticket) {
      return { title: ticket.title };
    }
    protected toAggregate(row: StoredRow<number, { title: string }>) {
      return new Ticket(row.id, row.title);
    }
  }

  it("idType 'bigint' stores numeric ids and hands them back as numbers; strings and unsafe integers are refused", async () => {
    const repository = new TicketRepository({ pool, aggregate: Ticket });
    await repository.insert(new Ticket(42, 'answer'));
    await repository.insert(new Ticket(Number.MAX_SAFE_INTEGER, 'max'));
    const loaded = (await repository.findById(42))!;
    expect(loaded.id).toBe(42);
    expect((await repository.findById(Number.MAX_SAFE_INTEGER))!.id).toBe(Number.MAX_SAFE_INTEGER);
    await expect(repository.findById('42' as unknown as number)).rejects.toBeInstanceOf(InvalidAggregateIdError);
    await expect(repository.insert(new Ticket(2 ** 53, 'unsafe'))).rejects.toBeInstanceOf(InvalidAggregateIdError);
    await expect(repository.insert(new Ticket(1.5, 'fraction'))).rejects.toBeInstanceOf(InvalidAggregateIdError);
    expect(await repository.currentVersion(42)).toBe(1);
  });

  it('custom id and version columns', async () => {
    const table = nextTable();
    class Renamed extends CounterPostgresRepository {
      protected override get idColumn(): string {
        return 'counter_id';
      }
      protected override get versionColumn(): string {
        return 'revision';
      }
    }
    const repository = new Renamed({ pool, table, aggregate: Counter });
    const counter = new Counter('r1', 'renamed');
    await repository.insert(counter);
    counter.increment();
    await repository.update(counter);
    expect((await repository.findById('r1'))!.oldVersion).toBe(2);
    expect(await rowsOf(table)).toEqual([{ counter_id: 'r1', revision: '2', label: 'renamed', count: 1, tags: [] }]);
    await repository.remove(counter);
    expect(await repository.currentVersion('r1')).toBe(-1);
  });

  it('a row with no valid version (written around the repository) is reported, not trusted', async () => {
    const table = nextTable();
    await pool.query(
      `CREATE TABLE "${table}" (id text PRIMARY KEY, version bigint, label text, count integer, tags jsonb)`,
    );
    await pool.query(`INSERT INTO "${table}" VALUES ('nov', NULL, 'x', 0, '[]'), ('zero', 0, 'x', 0, '[]')`);
    const repository = counters({ table });
    for (const id of ['nov', 'zero']) {
      await expect(repository.findById(id)).rejects.toThrow(RepositoryError);
      await expect(repository.currentVersion(id)).rejects.toThrow(/no valid "version"/);
    }
  });
});

describe('PostgresRepository: statements that must commit with the write (statementsToCommitWith)', () => {
  let auditTable: string;

  /** Counters whose every write also records its events in an audit table, as an outbox will. */
  class AuditedCounters extends CounterPostgresRepository {
    failAudit = false;
    protected override statementsToCommitWith(
      counter: Counter,
      operation: PostgresWriteOperation,
      events: readonly DataSyncEvent[],
    ): readonly PostgresStatement[] {
      return events.map((event) => ({
        text: `INSERT INTO "${auditTable}" (id, version, operation) VALUES ($1, $2, $3)`,
        values: [this.failAudit ? 'fail' : counter.id, event.version, `${operation}:${event.type}`],
      }));
    }
  }

  beforeAll(async () => {
    auditTable = nextTable();
    await pool.query(
      `CREATE TABLE "${auditTable}" (id text NOT NULL, version bigint NOT NULL, operation text NOT NULL, PRIMARY KEY (id, version))`,
    );
    // The failing audit row: its key is taken.
    await pool.query(`INSERT INTO "${auditTable}" VALUES ('fail', 2, 'taken')`);
  });

  const audit = async () =>
    (
      await pool.query(
        `SELECT id, version::int, operation FROM "${auditTable}" WHERE id <> 'fail' ORDER BY id, version`,
      )
    ).rows;
  const xmin = async (table: string, where: string, values: unknown[]) =>
    (await pool.query(`SELECT xmin::text AS x FROM "${table}" WHERE ${where}`, values)).rows[0]?.x;

  afterEach(async () => {
    await pool.query(`DELETE FROM "${auditTable}" WHERE id <> 'fail'`);
  });

  it('runs them after the write in one transaction of its own (BEGIN … COMMIT) when there is no ambient one', async () => {
    const table = nextTable();
    const observed = observedPool(pool);
    const repository = new AuditedCounters({ pool: observed.pool, table, aggregate: Counter });
    await repository.ensureTable();
    observed.sent.length = 0;
    const counter = new Counter('a1', 'audited');
    await repository.insert(counter);
    expect(observed.sent.map((s) => s.text.split(' ')[0])).toEqual(['BEGIN', 'INSERT', 'INSERT', 'COMMIT']);
    counter.increment();
    await repository.update(counter);
    // Same transaction: the counter row and its audit row carry the same xmin.
    expect(await xmin(table, 'id = $1', ['a1'])).toBe(await xmin(auditTable, 'id = $1 AND version = $2', ['a1', 2]));
    await repository.remove(counter);
    // One row per event of each write, the events it publishes.
    expect(await audit()).toEqual([
      { id: 'a1', version: 1, operation: 'insert:UPSERT' },
      { id: 'a1', version: 2, operation: 'update:UPSERT' },
      { id: 'a1', version: 3, operation: 'remove:PURGE' },
    ]);
  });

  it('a write that matched nothing runs none of them (ROLLBACK), and is an OptimisticLockError', async () => {
    const table = nextTable();
    const repository = new AuditedCounters({ pool, table, aggregate: Counter });
    await repository.insert(new Counter('a2', 'x'));
    const stale = (await repository.findById('a2'))!;
    await repository.update((await repository.findById('a2'))!);
    await expect(repository.update(stale)).rejects.toBeInstanceOf(OptimisticLockError);
    await expect(repository.insert(new Counter('a2', 'again'))).rejects.toThrow(/already exists/);
    expect((await audit()).map((r) => `${r.operation}@${r.version}`)).toEqual(['insert:UPSERT@1', 'update:UPSERT@2']);
  });

  it('when one of them fails, the write is rolled back with it: nothing stored, nothing published, versions kept', async () => {
    const table = nextTable();
    const bus = new DataSyncEventBus();
    const published: DataSyncEvent[] = [];
    bus.subscribe(Counter, (events) => void published.push(...events));
    const repository = new AuditedCounters({ pool, table, aggregate: Counter, publisher: bus });
    const counter = new Counter('a3', 'x');
    await repository.insert(counter);
    published.length = 0;
    repository.failAudit = true;
    counter.increment();
    await expect(repository.update(counter)).rejects.toMatchObject({ code: '23505' });
    expect([
      counter.oldVersion,
      await repository.currentVersion('a3'),
      (await repository.findById('a3'))!.count,
    ]).toEqual([1, 1, 0]);
    expect(published).toEqual([]);
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it('a lone statement is autocommitted: no BEGIN, no COMMIT', async () => {
    const observed = observedPool(pool);
    const repository = counters({ pool: observed.pool });
    await repository.ensureTable();
    observed.sent.length = 0;
    const counter = new Counter('solo', 'x');
    await repository.insert(counter);
    await repository.update(counter);
    await repository.remove(counter);
    expect(observed.sent.map((s) => s.text.split(' ')[0])).toEqual(['INSERT', 'UPDATE', 'DELETE']);
  });
});

describe('PostgresRepository under network faults (proxy in front of PostgreSQL)', () => {
  let proxy: FaultProxy;
  let faulty: pg.Pool;

  beforeAll(async () => {
    const proxied = await proxyUrl('postgres', schema.url);
    proxy = proxied.proxy;
    faulty = new pg.Pool({ connectionString: proxied.url, max: 4, query_timeout: 1_500 });
  });
  afterEach(() => proxy.clear());
  afterAll(async () => {
    await faulty.end();
    await proxy.close();
  });

  /** A repository through the proxy, its events recorded, and the same table read directly. */
  async function setup(Repository: typeof CounterPostgresRepository = CounterPostgresRepository) {
    const table = nextTable();
    const bus = new DataSyncEventBus();
    const published: DataSyncEvent[] = [];
    bus.subscribe(Counter, (events) => void published.push(...events));
    const repository = new Repository({ pool: faulty, table, aggregate: Counter, publisher: bus });
    const direct = counters({ table });
    const counter = new Counter('f', 'faulty');
    await repository.insert(counter);
    published.length = 0;
    return { repository, direct, counter, published, table };
  }

  const isRepositoryVerdict = (error: unknown) =>
    error instanceof OptimisticLockError || error instanceof RepositoryError;

  it.each(['cut', 'hold'] as const)(
    'UPDATE applied but its reply lost (then %s): an error — never a success, never a conflict; nothing published, versions kept; a reload shows the write',
    async (then) => {
      const { repository, direct, counter, published } = await setup();
      counter.increment(5);
      proxy.dropReply({ match: /^UPDATE/, then });
      const error = await repository.update(counter).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(isRepositoryVerdict(error)).toBe(false);
      expect([counter.oldVersion, counter.newVersion]).toEqual([1, 2]);
      expect(published).toEqual([]);
      // The server did apply it (autocommit): the stored state is the one this write sent.
      const stored = (await direct.findById('f'))!;
      expect([stored.oldVersion, stored.count]).toEqual([2, 5]);
      // Replaying the same write now is a conflict, and that is true: the row moved on (to this very write).
      await expect(repository.update(counter)).rejects.toBeInstanceOf(OptimisticLockError);
      expect((await direct.findById('f'))!.count).toBe(5);
    },
  );

  it('UPDATE never delivered: an error; nothing stored, nothing published; the same write then succeeds', async () => {
    const { repository, direct, counter, published } = await setup();
    counter.increment();
    proxy.dropRequest({ match: /^UPDATE/, cutAfterMs: 200 });
    const error = await repository.update(counter).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(isRepositoryVerdict(error)).toBe(false);
    expect(await direct.currentVersion('f')).toBe(1);
    expect(published).toEqual([]);
    await repository.update(counter);
    expect([await direct.currentVersion('f'), published.length]).toEqual([2, 1]);
  });

  it('INSERT and DELETE replies lost: errors; a replay then says DuplicateAggregateError / OptimisticLockError, both true of the stored state', async () => {
    const { repository, direct, published } = await setup();
    const fresh = new Counter('g', 'new');
    proxy.dropReply({ match: /^INSERT/ });
    expect(isRepositoryVerdict(await repository.insert(fresh).catch((e: unknown) => e))).toBe(false);
    expect(fresh.isNew()).toBe(true);
    expect(await direct.currentVersion('g')).toBe(1);
    await expect(repository.insert(fresh)).rejects.toThrow(/already exists/);

    const loaded = (await repository.findById('g'))!;
    proxy.dropReply({ match: /^DELETE/ });
    expect(isRepositoryVerdict(await repository.remove(loaded).catch((e: unknown) => e))).toBe(false);
    expect(loaded.isDeleted()).toBe(false);
    expect(await direct.currentVersion('g')).toBe(-1);
    await expect(repository.remove(loaded)).rejects.toBeInstanceOf(OptimisticLockError);
    expect(published).toEqual([]);
  });

  it('inside a transaction, a lost reply to UPDATE: an error, never a conflict; the transaction is gone, nothing stored or published', async () => {
    const { repository, direct, counter, published } = await setup();
    counter.increment();
    proxy.dropReply({ match: /^UPDATE/ });
    let seenInside: unknown;
    const outcome = await runInTransaction(faulty, async () => {
      seenInside = await repository.update(counter).catch((e: unknown) => e);
      throw seenInside;
    }).catch((e: unknown) => e);
    expect(seenInside).toBeInstanceOf(Error);
    expect(isRepositoryVerdict(seenInside)).toBe(false);
    expect(outcome).toBe(seenInside);
    expect([counter.oldVersion, await direct.currentVersion('f')]).toEqual([1, 1]);
    expect(published).toEqual([]);
  });

  it('with statements that must commit with it: a lost reply before COMMIT stores neither; a lost COMMIT reply (outcome unknown) stored both', async () => {
    const audit = nextTable();
    await pool.query(`CREATE TABLE "${audit}" (id text, version bigint)`);
    class Audited extends CounterPostgresRepository {
      protected override statementsToCommitWith(counter: Counter): readonly PostgresStatement[] {
        return [{ text: `INSERT INTO "${audit}" VALUES ($1, $2)`, values: [counter.id, counter.newVersion] }];
      }
    }
    const { repository, direct, counter, published } = await setup(Audited);
    const audited = async () =>
      (await pool.query(`SELECT version::int AS v FROM "${audit}" ORDER BY version`)).rows.map((r) => r.v);
    expect(await audited()).toEqual([1]);

    counter.increment();
    proxy.dropReply({ match: /^UPDATE/ });
    expect(isRepositoryVerdict(await repository.update(counter).catch((e: unknown) => e))).toBe(false);
    expect([await direct.currentVersion('f'), await audited()]).toEqual([1, [1]]);

    proxy.dropReply({ match: 'COMMIT' });
    expect(isRepositoryVerdict(await repository.update(counter).catch((e: unknown) => e))).toBe(false);
    expect([await direct.currentVersion('f'), await audited()]).toEqual([2, [1, 2]]);
    expect(published).toEqual([]);
    expect(faulty.idleCount).toBe(faulty.totalCount);
  });

  it('seeded random faults on every reply: each confirmed write is stored, each failed one stored or not — never a wrong verdict', async () => {
    const { repository, direct, published } = await setup();
    // pg never resends a statement, so no duplicate: TCP does not duplicate either.
    proxy.random({ seed: 20240611, rate: 0.25, kinds: ['drop-reply-cut', 'delay', 'reset-mid-reply'], maxDelayMs: 50 });
    let confirmed = 0;
    let failed = 0;
    for (let i = 0; i < 60; i++) {
      try {
        const counter = await repository.findById('f');
        if (counter === null) throw new Error('the counter vanished');
        counter.increment();
        await repository.update(counter);
        confirmed++;
      } catch (error) {
        // A conflict cannot happen (one writer): any error here is a fault, with the outcome unknown.
        expect(error).not.toBeInstanceOf(OptimisticLockError);
        failed++;
      }
    }
    proxy.clear();
    const stored = (await direct.findById('f'))!;
    expect(proxy.injected).toBeGreaterThan(5);
    expect(confirmed).toBeGreaterThan(10);
    expect(stored.count).toBeGreaterThanOrEqual(confirmed);
    expect(stored.count).toBeLessThanOrEqual(confirmed + failed);
    expect(stored.oldVersion).toBe(stored.count + 1);
    // One event per confirmed write, never for a failed one.
    expect(published).toHaveLength(confirmed);
  });
});
