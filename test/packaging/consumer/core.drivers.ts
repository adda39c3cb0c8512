// @ddd-kit/core on its drivers: a module-owned Redis client opened and closed, and one
// transaction on a real PostgreSQL pool (pg is no peer of core: a library brings it).
import { strict as assert } from 'node:assert';
import { Logger } from '@nestjs/common';
import { closeRedis, openRedis } from '@ddd-kit/core/redis';
import { PgSchema, runTransaction } from '@ddd-kit/core/postgres';
import pg from 'pg';
import { requiredEnv, RUN_ID } from './env.js';

export async function run(): Promise<void> {
  const redis = await openRedis({ url: requiredEnv('REDIS_URL') }, new Logger('core'), (cause) => cause);
  try {
    assert.equal(await redis.ping(), 'PONG');
  } finally {
    await closeRedis(redis);
  }

  const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: 1 });
  const table = `"${RUN_ID}_core"`;
  try {
    const schema = new PgSchema(pool, {
      owner: 'core.drivers',
      create: true,
      tables: () => [{ name: table, columns: ['id'] }],
      migrations: () => [
        { name: 'create table', statements: [`CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY)`] },
      ],
    });
    // Inside a transaction holding the pool's only connection: the table is made on another one.
    await runTransaction(pool, undefined, async (context) => {
      await schema.ensure();
      await context.guarded.query(`INSERT INTO ${table} VALUES ('a')`);
    });
    assert.equal((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, 1);
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    await pool.query(`DELETE FROM ddd_kit_migrations WHERE target = $1`, [table]).catch(() => undefined);
    await pool.end();
  }
}
