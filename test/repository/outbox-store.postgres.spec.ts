import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  getRepositoryToken,
  OnDataSync,
  RepositoryModule,
  type DataSyncEvent,
  type IRepository,
} from '@ddd-kit/repository';
import { OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { postgresSchema } from '../support/servers.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';
import { describeOutboxStoreContract } from '@ddd-kit/repository/testing';
import { observedPool } from './support/postgres.support.js';

// One schema for the suite; every case on a table pair of its own.
let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
let n = 0;
beforeAll(async () => {
  schema = await postgresSchema('outbox_store');
  pool = new pg.Pool({ connectionString: schema.url, max: 12 });
});
afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

describeOutboxStoreContract('PostgresOutboxStore', async () => {
  const i = ++n;
  const store = new PostgresOutboxStore({ pool, table: `outbox_${i}` });
  return {
    store,
    repository: new CounterPostgresRepository({ aggregate: Counter, pool, table: `counters_${i}`, outbox: store }),
    close: async () => {},
  };
});

describe('PostgresOutboxStore: the write', () => {
  it('stores the row and its events in one statement, every value a parameter', async () => {
    const observed = observedPool(pool);
    const store = new PostgresOutboxStore({ pool: observed.pool, table: 'outbox_write' });
    const repository = new CounterPostgresRepository({
      aggregate: Counter,
      pool: observed.pool,
      table: 'counters_write',
      outbox: store,
    });
    await repository.insert(new Counter('w', "it's; DROP TABLE x --"));
    await store.ensureTable();
    observed.sent.length = 0;
    const counter = (await repository.findById('w'))!;
    counter.increment();
    await repository.update(counter);
    const writes = observed.sent.filter((s) => /INSERT INTO "outbox_write"/.test(s.text));
    expect(writes).toHaveLength(1);
    expect(writes[0].text).toMatch(/^WITH w AS \(UPDATE "counters_write" .* RETURNING 1\) INSERT INTO "outbox_write"/s);
    expect(writes[0].text).not.toContain('DROP');
    expect(observed.sent.some((s) => /^BEGIN/.test(s.text))).toBe(false);
    const { rows } = await pool.query(
      'SELECT aggregate, aggregate_id, version, payload FROM outbox_write ORDER BY seq',
    );
    expect(rows.map((r) => [r.aggregate, r.aggregate_id, Number(r.version), r.payload.type])).toEqual([
      ['Counter', 'w', 1, 'UPSERT'],
      ['Counter', 'w', 2, 'UPSERT'],
    ]);
    expect(rows[0].payload.snapshot.label).toBe("it's; DROP TABLE x --");
  });

  it('a write whose condition fails inserts no event', async () => {
    const store = new PostgresOutboxStore({ pool, table: 'outbox_conflict' });
    const repository = new CounterPostgresRepository({
      aggregate: Counter,
      pool,
      table: 'counters_conflict',
      outbox: store,
    });
    await repository.insert(new Counter('c', 'one'));
    await expect(repository.insert(new Counter('c', 'two'))).rejects.toThrow();
    expect((await pool.query('SELECT count(*)::int AS n FROM outbox_conflict')).rows[0].n).toBe(1);
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => new PostgresOutboxStore({ pool, table: 'x; DROP TABLE y' })).toThrow(/identifier/);
    expect(() => new PostgresOutboxStore({ pool, notifyChannel: 'a b' })).toThrow(/identifier/);
  });
});

describe('PostgresOutboxStore: in an ambient transaction', () => {
  it('the events commit with the transaction, and a rollback takes them away with the row', async () => {
    const store = new PostgresOutboxStore({ pool, table: 'outbox_tx' });
    const repository = new CounterPostgresRepository({ aggregate: Counter, pool, table: 'counters_tx', outbox: store });
    await repository.ensureTable();
    await store.ensureTable();
    await runInTransaction(pool, async () => {
      await repository.insert(new Counter('kept', 'kept'));
      await repository.insert(new Counter('kept-2', 'kept'));
    });
    await expect(
      runInTransaction(pool, async () => {
        await repository.insert(new Counter('undone', 'undone'));
        throw new Error('the use case fails after the write');
      }),
    ).rejects.toThrow('the use case fails');
    const { rows } = await pool.query('SELECT aggregate_id FROM outbox_tx ORDER BY seq');
    expect(rows.map((r) => r.aggregate_id)).toEqual(['kept', 'kept-2']);
    expect(await repository.existsById('undone')).toBe(false);
  });
});

@Injectable()
class PgProjection {
  readonly received: string[] = [];
  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent[]): void {
    this.received.push(...events.map((e) => `${String(e.id)}@${e.version}`));
  }
}

describe('RepositoryModule.forRoot({ postgres, outbox })', () => {
  it("a PostgresRepository writes its events to the module's outbox table; the relay delivers them", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ postgres: { pool }, outbox: { relay: false, table: 'module_outbox' } }),
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterPostgresRepository, table: 'module_counters' },
        ]),
      ],
      providers: [PgProjection],
    }).compile();
    const app = await moduleRef.init();
    try {
      const counters = app.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
      const counter = new Counter('m', 'module');
      await counters.insert(counter);
      counter.increment();
      await counters.update(counter);
      expect(app.get(PgProjection).received).toEqual([]);
      expect((await pool.query('SELECT count(*)::int AS n FROM module_outbox')).rows[0].n).toBe(2);
      const relay = app.get(OutboxRelay);
      expect(await relay.status()).toMatchObject({ pending: 2, deadLetters: 0 });
      await relay.drain();
      expect(app.get(PgProjection).received).toEqual(['m@1', 'm@2']);
      expect((await pool.query('SELECT count(*)::int AS n FROM module_outbox')).rows[0].n).toBe(0);
    } finally {
      await app.close();
    }
  });
});
