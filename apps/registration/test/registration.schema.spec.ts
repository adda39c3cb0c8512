// `npm run schema -w apps/registration` prints every table the configured backends need, for a
// migration, and creates nothing: on a fresh schema, its output lists the libraries' tables and
// the sample's read model, the schema is still empty afterwards, and the statements, applied,
// make every table the app then finds at start-up. `-- status|up|sql`: the versioned migrations.
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

  /** The script's exit code and output (a failing exit is an answer here, not an error). */
  async function run(...args: string[]): Promise<{ code: number; stdout: string }> {
    assertBuilt('apps/registration');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [script, ...args], {
        env: {
          ...process.env,
          PREPARE_BACKEND: 'postgres',
          REPOSITORY_BACKEND: 'postgres',
          MACHINE_ID: 'postgres',
          DATABASE_URL: schema.url,
        },
        timeout: 60_000,
      });
      return { code: 0, stdout };
    } catch (error) {
      const { code, stdout, stderr } = error as { code?: unknown; stdout: string; stderr: string };
      if (typeof code !== 'number') throw error;
      return { code, stdout: stdout + stderr };
    }
  }

  it('prints every table, creates none, and its statements make the whole schema', async () => {
    const { stdout } = await run();
    for (const table of TABLES) expect(stdout).toMatch(new RegExp(`CREATE TABLE IF NOT EXISTS "?${table}"? `));
    expect(stdout).not.toMatch(/;;/);
    expect(await tables()).toEqual([]);

    await pool.query(stdout);
    expect(await tables()).toEqual(TABLES);
  }, 90_000);

  it('status exits 1 while migrations are pending, sql prints them, up applies them, then status exits 0', async () => {
    await pool.query(`DROP SCHEMA ${schema.schema} CASCADE; CREATE SCHEMA ${schema.schema}`);
    const behind = await run('status');
    expect(behind.code).toBe(1);
    expect(behind.stdout).toMatch(/^pending {2}@ddd-kit\/repository\/outbox "ddd_kit_outbox" #1 create table$/m);
    expect(behind.stdout).toMatch(/^pending {2}registration\/user-views user_views #1 create table$/m);
    expect((await run('sql')).stdout).toMatch(/^BEGIN;$[\s\S]*INSERT INTO "ddd_kit_migrations"/m);
    expect(await tables()).toEqual([]);

    expect(await run('up')).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^applied {2}@ddd-kit\/prepare-key/m),
    });
    expect(await tables()).toEqual([...TABLES, 'ddd_kit_migrations'].sort());
    expect(await run('status')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^up to date/m) });
    expect(await run('down')).toMatchObject({
      code: 2,
      stdout: expect.stringMatching(/usage: npm run schema -- \[status\|up\|sql\]/),
    });
  }, 90_000);
});
