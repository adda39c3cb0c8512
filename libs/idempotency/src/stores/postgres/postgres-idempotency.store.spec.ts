// The store against a real PostgreSQL (transactions, faults, the sweep): test/idempotency/postgres-idempotency.store.spec.ts.
import { describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { IdempotencyArgumentError } from '../../errors.js';
import { PostgresIdempotencyStore } from './postgres-idempotency.store.js';

describe('PostgresIdempotencyStore options', () => {
  it('refuses bad options', () => {
    // Never connected: the constructor only checks what it is given.
    const pool = { connect: async () => undefined } as unknown as pg.Pool;
    expect(() => new PostgresIdempotencyStore({} as pg.Pool)).toThrow(IdempotencyArgumentError);
    expect(() => new PostgresIdempotencyStore(pool, { table: 'a;drop' })).toThrow(IdempotencyArgumentError);
    expect(() => new PostgresIdempotencyStore(pool, { ttlMs: -1 })).toThrow(IdempotencyArgumentError);
  });
});
