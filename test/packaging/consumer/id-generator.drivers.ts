// @ddd-kit/id-generator on its optional drivers: a machine ID leased by RedisMachineIdDistributor
// (ioredis) and by PostgresMachineIdDistributor (pg), each released on close, and SegmentId blocks
// from Redis and from PostgreSQL.
import { strict as assert } from 'node:assert';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  GlobalIdGenerator,
  IdGeneratorModule,
  PostgresMachineIdDistributor,
  PostgresSegmentSource,
  RedisMachineIdDistributor,
  SegmentId,
  type MachineIdDistributor,
} from '@ddd-kit/id-generator';
import { Redis } from 'ioredis';
import pg from 'pg';
import { requiredEnv, RUN_ID } from './env.js';

async function leaseAndRelease(machine: MachineIdDistributor): Promise<void> {
  @Module({ imports: [IdGeneratorModule.forRoot({ machine, namespace: 'packaging' })] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    assert.match(app.get(GlobalIdGenerator).generate(), /^[0-9A-Za-z]{15}$/);
    assert.match(await app.get(GlobalIdGenerator).generateAsync(), /^[0-9A-Za-z]{15}$/);
  } finally {
    await app.close();
  }
}

async function countTo25(segments: SegmentId): Promise<void> {
  try {
    const numbers: number[] = [];
    for (let i = 0; i < 25; i++) numbers.push(Number(await segments.generateAsync()));
    assert.deepEqual(
      numbers,
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
  } finally {
    segments.close();
  }
}

export async function run(): Promise<void> {
  const redis = new Redis(requiredEnv('REDIS_URL'), { lazyConnect: true });
  const keyPrefix = `${RUN_ID}:machine-id:`;
  try {
    await redis.connect();
    await leaseAndRelease(new RedisMachineIdDistributor(redis, { keyPrefix }));
    await countTo25(await new SegmentId({ redis, key: `${RUN_ID}:segment`, segmentSize: 10 }).ready());
  } finally {
    const keys = await redis.keys(`${RUN_ID}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }

  const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: 2 });
  const tablePrefix = `${RUN_ID}_`;
  try {
    const distributor = new PostgresMachineIdDistributor(pool, { tablePrefix });
    await leaseAndRelease(distributor);
    const { rows } = await pool.query(
      `SELECT count(*)::int AS held FROM ${distributor.tables.ids} WHERE instance_id IS NOT NULL`,
    );
    assert.equal(rows[0].held, 0);
    // The source reserves on a pool of its own; closed, it lets the process exit (an idle
    // connection would hold it until its idle timeout on a pg older than 8.7).
    const source = new PostgresSegmentSource(pool, { tablePrefix });
    try {
      await countTo25(await new SegmentId({ source, key: 'segment', segmentSize: 10 }).ready());
    } finally {
      await source.close();
    }
  } finally {
    for (const table of ['machine_ids', 'machine_id_namespaces', 'segments'])
      await pool.query(`DROP TABLE IF EXISTS "${tablePrefix}${table}"`);
    await pool.end();
  }
}
