import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import { IdGeneratorModule, PostgresMachineIdDistributor, PostgresSegmentSource } from '@ddd-kit/id-generator';
import { PostgresPrepareKeyFactory, PreparableKey, PrepareKey, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { InjectRepository, OnDataSync, RepositoryModule, type IRepository } from '@ddd-kit/repository';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { Counter, CounterPostgresRepository } from '../repository/support/counter.aggregate.js';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

// The class of bug behind a fresh deployment that deadlocked under its first burst: a path that
// holds one pooled connection (a request's transaction) and asks the same pool for another.
// With every connection held by such a path, none is ever returned. Here the pool has ONE
// connection and a transaction holds it: every ddd-kit PostgreSQL part, on empty tables (a
// first start), must serve a request inside that transaction without a second one. The pool's
// wait is bounded, so a part that asks for one fails the test with pg's timeout, not a hang.

const WAIT_MS = 3_000;

@PreparableKey('one-connection-label')
abstract class LabelPrepareKey extends PrepareKey<{ id: string }> {}

@Injectable()
class Counters {
  readonly projected: string[] = [];
  constructor(
    @InjectRepository(Counter) readonly repository: IRepository<string, Counter>,
    readonly labels: LabelPrepareKey,
  ) {}

  // Makes the repository write each change's event to the outbox, in the write's transaction.
  @OnDataSync(Counter)
  project(events: readonly { id: unknown }[]): void {
    for (const event of events) this.projected.push(String(event.id));
  }
}

describe('no ddd-kit PostgreSQL part waits for a second pooled connection inside a transaction', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>> | undefined;
  let pool: pg.Pool | undefined;
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    await pool?.end();
    await schema?.drop();
    app = pool = schema = undefined;
  });

  const onePooledConnection = async (suite: string) => {
    schema = await postgresSchema(suite);
    pool = new pg.Pool({ connectionString: schema.url, max: 1, connectionTimeoutMillis: WAIT_MS });
    return pool;
  };

  it('PrepareKey, the repository, its outbox and the machine ID, as the modules start them on empty tables', async () => {
    const pool = await onePooledConnection('one_connection_modules');
    const moduleRef = await Test.createTestingModule({
      imports: [
        PrepareKeyModule.forRoot({
          factory: new PostgresPrepareKeyFactory(pool, { table: 'labels', sweepIntervalMs: 0 }),
        }),
        RepositoryModule.forRoot({ postgres: { pool }, outbox: {} }),
        RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterPostgresRepository, table: 'counters' }]),
        IdGeneratorModule.forRoot({ namespace: 'one-connection', machine: new PostgresMachineIdDistributor(pool) }),
      ],
      providers: [Counters],
    }).compile();
    app = await moduleRef.init();
    const counters = app.get(Counters);

    const id = 'm1';
    await runInTransaction(pool, async () => {
      expect(await counters.labels.prepare('first', { id })).toBe(true);
      expect(await counters.labels.get('first')).toEqual({ id });
      await counters.repository.insert(new Counter(id, 'first'));
      expect((await counters.repository.findById(id))?.label).toBe('first');
    });
    expect(await counters.labels.get('first')).toEqual({ id });
    // The event went through the outbox table (written in the transaction) to the handler.
    await waitFor('the handler to get the event', () => counters.projected.includes(id));
  });

  it('PrepareKey and the repository built by hand: their first use creates the tables, inside the transaction', async () => {
    const pool = await onePooledConnection('one_connection_by_hand');
    const factory = new PostgresPrepareKeyFactory(pool, { table: 'labels', sweepIntervalMs: 0 });
    try {
      const labels = factory.create<{ id: string }>('label');
      const repository = new CounterPostgresRepository({ pool, table: 'counters', aggregate: Counter });
      await runInTransaction(pool, async () => {
        expect(await labels.prepare('first', { id: 'c1' })).toBe(true);
        await repository.insert(new Counter('c1', 'first'));
      });
      expect([await labels.get('first'), await repository.currentVersion('c1')]).toEqual([{ id: 'c1' }, 1]);
    } finally {
      await factory.close();
    }
  });

  it('the segment source: a block reserved from inside a transaction, on empty tables', async () => {
    const pool = await onePooledConnection('one_connection_segments');
    const source = new PostgresSegmentSource(pool);
    const first = await runInTransaction(pool, () => source.reserve('orders', 100));
    expect(first).toBe(100);
    expect(await source.reserve('orders', 100)).toBe(200);
  });

  it('the machine-ID lease: acquired while a transaction holds the only pooled connection', async () => {
    const pool = await onePooledConnection('one_connection_machine_id');
    const distributor = new PostgresMachineIdDistributor(pool);
    try {
      const distribution = await runInTransaction(pool, () =>
        distributor.distribute({ namespace: 'one-connection', machineBits: 10, instanceId: 'one-connection-1' }),
      );
      expect(distribution).toMatchObject({ machineId: expect.any(Number) });
    } finally {
      await distributor.close();
    }
  });
});
