import { afterAll, beforeAll } from '@jest/globals';
import pg from 'pg';
import { PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { postgresSchema } from '../support/servers.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';
import { describeRelayTiming } from './support/outbox-relay-timing.support.js';

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
let n = 0;
beforeAll(async () => {
  schema = await postgresSchema('outbox_relay_timing');
  pool = new pg.Pool({ connectionString: schema.url, max: 8 });
});
afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

describeRelayTiming('PostgresOutboxStore (LISTEN/NOTIFY)', async () => {
  const i = ++n;
  const store = new PostgresOutboxStore({ pool, table: `outbox_${i}` });
  const repository = new CounterPostgresRepository({ aggregate: Counter, pool, table: `counters_${i}`, outbox: store });
  await repository.ensureTable();
  await store.ensureTable();
  return { store, repository, wakes: true, close: async () => {} };
});
