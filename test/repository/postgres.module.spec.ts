import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import mongoose, { type Connection } from 'mongoose';
import pg from 'pg';
import {
  getRepositoryPoolToken,
  getRepositoryToken,
  InjectRepository,
  OnDataSync,
  PostgresRepository,
  RepositoryConfigurationError,
  RepositoryModule,
  type DataSyncEvent,
  type IRepository,
} from '@ddd-kit/repository';
import { mongoUri, postgresSchema, uniqueName } from '../support/servers.js';
import { Counter, CounterMongooseRepository, CounterPostgresRepository } from './support/counter.aggregate.js';

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let direct: pg.Pool;

beforeAll(async () => {
  schema = await postgresSchema('repository_module_pg');
  direct = new pg.Pool({ connectionString: schema.url, max: 2 });
});
afterAll(async () => {
  await direct?.end();
  await schema?.drop();
});

@Injectable()
class CounterService {
  readonly received: string[] = [];
  constructor(
    @InjectRepository(Counter) readonly counters: IRepository<string, Counter>,
    readonly byClass: CounterPostgresRepository,
    @Inject(getRepositoryPoolToken()) readonly pool: pg.Pool,
  ) {}

  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent[]): void {
    for (const event of events) this.received.push(`${event.type}@${event.version}:${event.id}`);
  }
}

describe('RepositoryModule with PostgreSQL', () => {
  it('forRoot({ postgres: { url } }): the module opens the pool, forFeature registers the repository on a table, shutdown ends the pool', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ postgres: { url: schema.url, poolOptions: { max: 3 } } }),
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterPostgresRepository, table: 'module_counters' },
        ]),
      ],
      providers: [CounterService],
    }).compile();
    const app = await moduleRef.init();
    const service = app.get(CounterService);
    try {
      expect(service.counters).toBeInstanceOf(CounterPostgresRepository);
      expect(service.counters).toBe(service.byClass);
      expect(app.get(getRepositoryToken(Counter))).toBe(service.counters);
      expect(service.pool).toBeInstanceOf(pg.Pool);
      expect(service.pool.options.max).toBe(3);

      const counter = new Counter('m1', 'module');
      await service.counters.insert(counter);
      counter.increment();
      await service.counters.update(counter);
      expect((await direct.query('SELECT id, version, count FROM module_counters')).rows).toEqual([
        { id: 'm1', version: '2', count: 1 },
      ]);
      expect(service.received).toEqual(['UPSERT@1:m1', 'UPSERT@2:m1']);
    } finally {
      await app.close();
    }
    expect(service.pool.ended).toBe(true);
  });

  it('forRootAsync with your pool: used as given, left open at shutdown; createTables: false checks the table at start-up', async () => {
    const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    const POOL = 'POOL';
    @Module({ providers: [{ provide: POOL, useValue: pool }], exports: [POOL] })
    class DatabaseModule {}
    const boot = () =>
      Test.createTestingModule({
        imports: [
          RepositoryModule.forRootAsync({
            imports: [DatabaseModule],
            inject: [POOL],
            useFactory: (p: pg.Pool) => ({ postgres: { pool: p, createTables: false } }),
          }),
          RepositoryModule.forFeature([
            { aggregate: Counter, repository: CounterPostgresRepository, table: 'migrated_counters' },
          ]),
        ],
      })
        .compile()
        .then((moduleRef) => moduleRef.init());
    // Not created: the start-up fails naming the table and the statement that makes it.
    await expect(boot()).rejects.toThrow(
      /CounterPostgresRepository: table "migrated_counters" does not exist.*CREATE TABLE IF NOT EXISTS "migrated_counters"/s,
    );
    await direct.query(new CounterPostgresRepository({ pool, table: 'migrated_counters' }).createTableStatement());
    const app = await boot();
    try {
      expect(app.get(getRepositoryPoolToken())).toBe(pool);
      const counters = app.get(CounterPostgresRepository);
      await counters.insert(new Counter('x', 'x'));
      expect(await counters.currentVersion('x')).toBe(1);
    } finally {
      await app.close();
    }
    expect(pool.ended).toBe(false);
    expect((await pool.query('SELECT count(*)::int AS n FROM migrated_counters')).rows[0].n).toBe(1);
    await pool.end();
  });

  it('a declared column its table lacks fails the start-up, naming the column', async () => {
    await direct.query(
      'CREATE TABLE short_counters (id text PRIMARY KEY, version bigint NOT NULL, label text NOT NULL)',
    );
    const start = Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ postgres: { url: schema.url } }),
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterPostgresRepository, table: 'short_counters' },
        ]),
      ],
    })
      .compile()
      .then((moduleRef) => moduleRef.init());
    // Before: CREATE TABLE IF NOT EXISTS said nothing, and the first insert failed on a bare `column … does not exist`.
    await expect(start).rejects.toThrow(/table "short_counters" has no column "count", "tags"/);
  });

  it('MongoDB and PostgreSQL side by side: each repository on its own store', async () => {
    class Tally extends Counter {}
    const dbName = uniqueName('repository_pg_mongo');
    const uri = new URL(mongoUri());
    uri.pathname = `/${dbName}`;
    const moduleRef = await Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ uri: uri.toString(), postgres: { url: schema.url } }),
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterPostgresRepository, table: 'side_by_side' },
          { aggregate: Tally, repository: CounterMongooseRepository as never, collection: 'tallies' },
        ]),
      ],
    }).compile();
    const app = await moduleRef.init();
    const connection = (app.get(CounterMongooseRepository) as unknown as { connection: Connection }).connection;
    try {
      await app.get<IRepository<string, Counter>>(getRepositoryToken(Counter)).insert(new Counter('pg', 'x'));
      await app.get<IRepository<string, Tally>>(getRepositoryToken(Tally)).insert(new Tally('mongo', 'x'));
      expect((await direct.query('SELECT id FROM side_by_side')).rows).toEqual([{ id: 'pg' }]);
      expect(await connection.db!.collection('tallies').countDocuments({ _id: 'mongo' as never })).toBe(1);
      await connection.db!.collection('tallies').deleteMany({});
    } finally {
      await app.close();
    }
    expect(connection.readyState).toBe(mongoose.ConnectionStates.disconnected);
  });

  describe('bootstrap errors', () => {
    it('a PostgresRepository without a pool fails at bootstrap saying how to configure one', async () => {
      await expect(
        Test.createTestingModule({
          imports: [
            RepositoryModule.forRoot(),
            RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterPostgresRepository }]),
          ],
        }).compile(),
      ).rejects.toThrow(
        /RepositoryModule has no PostgreSQL pool: pass \{ postgres: \{ url \} \} or \{ postgres: \{ pool \} \}/,
      );
    });

    it('invalid postgres options fail with RepositoryConfigurationError', () => {
      const pool = new pg.Pool();
      const invalid: unknown[] = [
        {},
        { url: 'mysql://x' },
        { url: 42 },
        { url: schema.url, pool },
        { pool: {} },
        { pool: null },
        { poolOptions: { max: 1 }, pool },
        { url: schema.url, poolOptions: 'max=1' },
        { url: schema.url, createTables: 'no' },
        'postgres://x',
      ];
      for (const postgres of invalid) {
        expect(() => RepositoryModule.forRoot({ postgres: postgres as never })).toThrow(RepositoryConfigurationError);
      }
      return pool.end();
    });

    it('table needs a PostgresRepository class; a bad table name or declaration fails at bootstrap', async () => {
      expect(() => RepositoryModule.forFeature([{ aggregate: Counter, table: 'counters' }])).toThrow(
        /table needs a PostgresRepository/,
      );
      expect(() =>
        RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterMongooseRepository, table: 'counters' }]),
      ).toThrow(/table needs a PostgresRepository/);
      expect(() =>
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterPostgresRepository, collection: 'counters' },
        ]),
      ).toThrow(/collection needs a MongooseRepository/);
      const boot = (feature: object) =>
        Test.createTestingModule({
          imports: [
            RepositoryModule.forRoot({ postgres: { pool: direct } }),
            RepositoryModule.forFeature([feature as never]),
          ],
        }).compile();
      await expect(
        boot({ aggregate: Counter, repository: CounterPostgresRepository, table: 'counters; DROP TABLE x' }),
      ).rejects.toThrow(RepositoryConfigurationError);

      @Injectable()
      class BadlyDeclared extends PostgresRepository<string, Counter, { label: string }> {
        protected readonly table = 'bad';
        protected readonly columns = { label: 'text); DROP TABLE x; --' };
        protected toRow(counter: Counter) {
          return { label: counter.label };
        }
        protected toAggregate(): Counter {
          throw new Error('unused');
        }
      }
      await expect(boot({ aggregate: Counter, repository: BadlyDeclared })).rejects.toThrow(
        /BadlyDeclared: the type of column "label"/,
      );
    });

    it('an unreachable PostgreSQL fails the bootstrap (the pool is checked, then ended)', async () => {
      await expect(
        Test.createTestingModule({
          imports: [RepositoryModule.forRoot({ postgres: { url: 'postgres://postgres@127.0.0.1:1/nowhere' } })],
        }).compile(),
      ).rejects.toThrow(/ECONNREFUSED/);
    });
  });
});
