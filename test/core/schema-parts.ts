import type pg from 'pg';
import { collectingSchema } from '@ddd-kit/core/postgres';
import { PostgresMachineIdDistributor, PostgresSegmentSource } from '@ddd-kit/id-generator';
import { PostgresIdempotencyStore } from '@ddd-kit/idempotency';
import { PostgresPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { CounterPostgresRepository } from '../repository/support/counter.aggregate.js';

/**
 * One of every PostgreSQL part of the kit, with its default names (a repository of counters for
 * the aggregate tables): the layout fixtures/schema-b2c7726.sql was printed from.
 */
export function allParts(pool: pg.Pool, createTables = true) {
  const repository = new CounterPostgresRepository({ pool, createTables });
  return {
    prepareKey: new PostgresPrepareKeyFactory(pool, { createTables, sweepIntervalMs: 0 }),
    idempotency: new PostgresIdempotencyStore(pool, { createTables, sweepIntervalMs: 0 }),
    outbox: new PostgresOutboxStore({ pool, createTables }),
    repository,
    machineIds: new PostgresMachineIdDistributor(pool, { createTables }),
    segments: new PostgresSegmentSource(pool, { createTables }),
  };
}

/**
 * Each part's own start-up path to its tables (what its module runs at bootstrap, or its first
 * use), then its connections closed. While an application is booted only to read its schema,
 * this is how the parts are found.
 */
export async function startAll(parts: ReturnType<typeof allParts>): Promise<void> {
  await parts.prepareKey.ensureSchema();
  await parts.idempotency.ensureSchema();
  await parts.outbox.ensureTable();
  await parts.repository.ensureSchema();
  await parts.machineIds.distribute({ namespace: 'schema-parts', machineBits: 4, instanceId: 'schema-parts' });
  await parts.machineIds.close();
  // Its first block reserved: only reading the schema, the table is not there to reserve from.
  await parts.segments.reserve('schema-parts', 1).catch((error: unknown) => {
    if (!collectingSchema()) throw error;
  });
}
