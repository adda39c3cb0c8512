import type pg from 'pg';
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
