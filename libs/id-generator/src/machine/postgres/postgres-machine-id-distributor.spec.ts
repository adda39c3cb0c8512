// What needs no database: option checks, the published DDL, the pool type. The distributor on
// PostgreSQL is tested in test/id-generator/postgres-machine-id-distributor.spec.ts.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { IdGeneratorOptionsError } from '../../errors.js';
import { PostgresSegmentSource } from '../../generators/segment/postgres-segment-source.js';
import { PostgresMachineIdDistributor } from './postgres-machine-id-distributor.js';

describe('PostgresMachineIdDistributor (no database)', () => {
  // Never connects: nothing here sends a statement.
  const pool = new pg.Pool();

  afterAll(async () => {
    await pool.end();
  });

  it('refuses schema and table prefixes that are not plain identifiers, and a client that is not a pool', () => {
    expect(() => new PostgresMachineIdDistributor(pool, { schema: 'public; DROP TABLE x' })).toThrow(
      IdGeneratorOptionsError,
    );
    expect(() => new PostgresMachineIdDistributor(pool, { tablePrefix: 'a-b' })).toThrow(IdGeneratorOptionsError);
    expect(() => new PostgresMachineIdDistributor(pool, { tablePrefix: 'x'.repeat(60) })).toThrow(
      IdGeneratorOptionsError,
    );
    expect(() => new PostgresMachineIdDistributor({ query: async () => ({ rows: [], rowCount: 0 }) } as never)).toThrow(
      /pg.Pool/,
    );
  });

  it('the DDL in docs/postgresql-schema.md is the DDL the distributor and the segment source run', () => {
    const page = readFileSync(
      join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'postgresql-schema.md'),
      'utf8',
    );
    const block = /<!-- ddl:machine-ids -->\n```sql\n([\s\S]*?)```/.exec(page)?.[1];
    const ddl = [...new PostgresMachineIdDistributor(pool).ddl(), ...new PostgresSegmentSource(pool).ddl()];
    expect(block?.trim()).toBe(`${ddl.join(';\n\n')};`);
  });

  it('a pg.Pool type-checks as its pool', () => {
    const typed: ConstructorParameters<typeof PostgresMachineIdDistributor>[0] = pool;
    expect(typed).toBe(pool);
  });
});
