// Reservation and aggregate in one PostgreSQL transaction (SPEC §5): the PostgreSQL PrepareKey
// and PostgresRepository on one pool, both joining the transaction runInTransaction starts.
// Nothing here imports one library from the other: they meet on the ambient-transaction protocol.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { PostgresPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { postgresSchema } from '../support/servers.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
let factory: PostgresPrepareKeyFactory;

beforeAll(async () => {
  schema = await postgresSchema('one_transaction');
  pool = new pg.Pool({ connectionString: schema.url, max: 8 });
  factory = new PostgresPrepareKeyFactory(pool, { table: 'reservations', sweepIntervalMs: 0 });
});
afterAll(async () => {
  await factory?.close();
  await pool?.end();
  await schema?.drop();
});

describe('a reservation and an aggregate in one PostgreSQL transaction', () => {
  const labels = () => factory.create<{ id: string }>('label');
  const counters = (table: string) => new CounterPostgresRepository({ pool, table, aggregate: Counter });

  /** The use case: reserve the label for the counter, then store the counter; `fail` throws after both. */
  const register = (repository: CounterPostgresRepository, id: string, label: string, fail = false) =>
    runInTransaction(pool, async () => {
      if (!(await labels().prepare(label, { id }))) return false;
      await repository.insert(new Counter(id, label));
      if (fail) throw new Error('the use case fails after both writes');
      return true;
    });

  it('commits both or neither', async () => {
    const repository = counters('one_tx_a');
    await expect(register(repository, 'c1', 'alpha', true)).rejects.toThrow('the use case fails after both writes');
    expect([await labels().get('alpha'), await repository.currentVersion('c1')]).toEqual([undefined, -1]);

    await expect(register(repository, 'c1', 'alpha')).resolves.toBe(true);
    expect([await labels().get('alpha'), await repository.currentVersion('c1')]).toEqual([{ id: 'c1' }, 1]);
  });

  it('racing transactions for one label: exactly one commits, holding it with its aggregate; the others store nothing', async () => {
    const repository = counters('one_tx_b');
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => register(repository, `r${i}`, 'contended')));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = `r${results.indexOf(true)}`;
    expect(await labels().get('contended')).toEqual({ id: winner });
    const stored = await Promise.all(results.map((_, i) => repository.currentVersion(`r${i}`)));
    expect(stored).toEqual(results.map((won) => (won ? 1 : -1)));
  });
});
