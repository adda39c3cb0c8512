// What needs no database; the source on PostgreSQL is tested in test/id-generator/segment-id.spec.ts.
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { IdGeneratorOptionsError } from '../../errors.js';
import { PostgresSegmentSource } from './postgres-segment-source.js';

describe('PostgresSegmentSource (no database)', () => {
  // Never connects: nothing here sends a statement.
  const pool = new pg.Pool();

  afterAll(async () => {
    await pool.end();
  });

  it('refuses a schema or table prefix that is not a plain identifier, and a client that is not a pool', () => {
    expect(() => new PostgresSegmentSource(pool, { schema: 'a"; DROP TABLE x; --' })).toThrow(IdGeneratorOptionsError);
    expect(() => new PostgresSegmentSource(pool, { tablePrefix: 'x y' })).toThrow(IdGeneratorOptionsError);
    expect(() => new PostgresSegmentSource({ query: () => undefined } as never)).toThrow(/pg.Pool/);
  });
});
