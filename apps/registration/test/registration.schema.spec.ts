// `npm run schema -w apps/registration` prints every table the configured backends need, for a
// migration, and creates nothing: on a fresh schema, its output lists the libraries' tables and
// the sample's read model, the schema is still empty afterwards, and the statements, applied,
// make every table the app then finds at start-up.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { assertBuilt } from '../../../test/support/built.js';
import { postgresSchema } from '../../../test/support/servers.js';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'schema.js');
const TABLES = [
  'ddd_kit_machine_id_namespaces',
  'ddd_kit_machine_ids',
  'ddd_kit_outbox',
  'idempotency_records',
  'user_views',
  'username_reservations',
  'users',
];

describe('npm run schema (the DDL for a migration) on PostgreSQL', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    schema = await postgresSchema('registration_schema');
    pool = new pg.Pool({ connectionString: schema.url, max: 1 });
  });

  afterAll(async () => {
    await pool?.end();
    await schema?.drop();
  });

  const tables = async () =>
    (
      await pool.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema.schema],
      )
    ).rows.map((row) => row.table_name);

  it('prints every table, creates none, and its statements make the whole schema', async () => {
    assertBuilt('apps/registration');
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: {
        ...process.env,
        PREPARE_BACKEND: 'postgres',
        REPOSITORY_BACKEND: 'postgres',
        MACHINE_ID: 'postgres',
        DATABASE_URL: schema.url,
      },
      timeout: 60_000,
    });
    for (const table of TABLES) expect(stdout).toMatch(new RegExp(`CREATE TABLE IF NOT EXISTS "?${table}"? `));
    expect(stdout).not.toMatch(/;;/);
    expect(await tables()).toEqual([]);

    await pool.query(stdout);
    expect(await tables()).toEqual(TABLES);
  }, 90_000);
});
