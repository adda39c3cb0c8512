// @ddd-kit/idempotency on its optional drivers: a run and its replay on Redis (ioredis) and PostgreSQL (pg), at
// whatever driver version the scratch project installed.
import { strict as assert } from 'node:assert';
import { PostgresIdempotencyStore, RedisIdempotencyStore, type IdempotencyStore } from '@ddd-kit/idempotency';
import { Redis } from 'ioredis';
import pg from 'pg';
import { requiredEnv, RUN_ID } from './env.js';

async function roundTrip(store: IdempotencyStore): Promise<void> {
  let calls = 0;
  const work = async () => ({ id: ++calls });
  assert.deepEqual(await store.run({ key: 'k', fingerprint: 'f' }, work), { result: { id: 1 }, replayed: false });
  assert.deepEqual(await store.run({ key: 'k', fingerprint: 'f' }, work), { result: { id: 1 }, replayed: true });
  assert.equal(calls, 1);
}

export async function run(): Promise<void> {
  const redis = new Redis(requiredEnv('REDIS_URL'), { lazyConnect: true });
  try {
    await redis.connect();
    await roundTrip(new RedisIdempotencyStore(redis, { keyPrefix: `${RUN_ID}:idempotency:` }));
  } finally {
    redis.disconnect();
  }

  const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: 2 });
  const store = new PostgresIdempotencyStore(pool, { table: `${RUN_ID}_idempotency`, sweepIntervalMs: 0 });
  try {
    await store.ensureSchema();
    await roundTrip(store);
  } finally {
    await pool.query(`DROP TABLE IF EXISTS "${RUN_ID}_idempotency"`);
    await pool.end();
  }
}
