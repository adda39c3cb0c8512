// @ddd-kit/prepare-key on its optional drivers: one round trip each on Redis (ioredis), MongoDB
// (mongoose) and PostgreSQL (pg), at whatever driver versions the scratch project installed.
import { strict as assert } from 'node:assert';
import {
  MongoPrepareKeyFactory,
  PostgresPrepareKeyFactory,
  RedisPrepareKeyFactory,
  type PrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';
import pg from 'pg';
import { clearCollections, requiredEnv, RUN_ID } from './env.js';

async function roundTrip(factory: PrepareKeyFactory): Promise<void> {
  const key = factory.create<{ userId: string }>('username');
  assert.equal(await key.prepare('alice', { userId: '1' }), true);
  assert.equal(await key.prepare('alice', { userId: '2' }), false);
  assert.deepEqual(await key.get('alice'), { userId: '1' });
  assert.equal(await key.reprepare('alice', { userId: '1' }, 'alicia', { userId: '1' }), true);
  assert.equal(await key.rollback('alicia', { userId: '1' }), true);
  assert.equal(await key.get('alicia'), undefined);
}

export async function run(): Promise<void> {
  const redis = new Redis(requiredEnv('REDIS_URL'), { lazyConnect: true });
  try {
    await redis.connect();
    await roundTrip(new RedisPrepareKeyFactory(redis, { keyPrefix: `${RUN_ID}:prepare:` }));
  } finally {
    redis.disconnect();
  }

  const connection = await mongoose
    .createConnection(`${requiredEnv('MONGODB_URI').replace(/\/+$/, '')}/${RUN_ID}`)
    .asPromise();
  try {
    await roundTrip(new MongoPrepareKeyFactory(connection));
    await clearCollections(connection.db!, ['prepare_username']);
  } finally {
    await connection.close();
  }

  const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: 2 });
  const table = `${RUN_ID}_prepare_keys`;
  try {
    const factory = new PostgresPrepareKeyFactory(pool, { table, sweepIntervalMs: 0 });
    await roundTrip(factory);
    await factory.close();
  } finally {
    await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    await pool.end();
  }
}
