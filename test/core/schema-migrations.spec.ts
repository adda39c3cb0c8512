import 'reflect-metadata';
import { afterAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { PgSchema, runSchemaCommand, schemaCommand, type PgMigration } from '@ddd-kit/core/postgres';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { allParts, startAll } from './schema-parts.js';

// The versioned schema: each part's numbered migrations, recorded in ddd_kit_migrations;
// status / up / sql over them; createTables applying the same ones; a database made before
// migrations were recorded (the fixture) brought to the same schema as a new one.

const opened: Array<{ pool: pg.Pool; drop: () => Promise<void> }> = [];
afterAll(async () => {
  for (const { pool, drop } of opened) {
    await pool.end();
    await drop();
  }
});

/** A fresh schema (the search path of its pool's connections) and a pool on it. */
async function freshDatabase(name: string) {
  const schema = await postgresSchema(name);
  const pool = new pg.Pool({ connectionString: schema.url, max: 4 });
  opened.push({ pool, drop: schema.drop });
  return { ...schema, pool };
}

const v1: PgMigration = {
  name: 'create widgets',
  statements: ['CREATE TABLE IF NOT EXISTS "widgets" (id text PRIMARY KEY)'],
};
const v2: PgMigration = { name: 'add color', statements: ['ALTER TABLE "widgets" ADD COLUMN color text'] };

function widgets(pool: pg.Pool, migrations: PgMigration[], create = true): PgSchema {
  return new PgSchema(pool, {
    owner: 'Widgets',
    part: 'test/widgets',
    create,
    tables: () => [{ name: '"widgets"', columns: migrations.length > 1 ? ['id', 'color'] : ['id'] }],
    migrations: () => migrations,
  });
}

async function command(which: 'status' | 'up' | 'sql', schemas: PgSchema[]) {
  const lines: string[] = [];
  const code = await schemaCommand(which, schemas, (text) => lines.push(text));
  return { code, output: lines.join('\n') };
}

const recorded = async (pool: pg.Pool) =>
  (await pool.query('SELECT part, target, version, name, checksum FROM ddd_kit_migrations ORDER BY 1, 2, 3')).rows;

const columnsOf = async (pool: pg.Pool, table: string) =>
  (
    await pool.query(
      'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position',
      [table],
    )
  ).rows.map((row: { column_name: string }) => row.column_name);

describe('status, up and sql', () => {
  it('status exits 1 on a database one migration behind, naming it; sql prints it; up applies it; then status exits 0', async () => {
    const { pool } = await freshDatabase('migrate_behind');
    await widgets(pool, [v1]).create();
    const current = [widgets(pool, [v1, v2])];

    const behind = await command('status', current);
    expect(behind.code).toBe(1);
    expect(behind.output).toMatch(/^pending {2}test\/widgets "widgets" #2 add color$/m);
    expect(behind.output).not.toMatch(/#1/);

    const sql = await command('sql', current);
    expect(sql.code).toBe(0);
    expect(sql.output).toContain('ALTER TABLE "widgets" ADD COLUMN color text;');
    expect(sql.output).toMatch(
      /INSERT INTO "ddd_kit_migrations" .* VALUES \('test\/widgets', '"widgets"', 2, 'add color', '[0-9a-f]{16}'\);\nCOMMIT;/,
    );
    expect(await columnsOf(pool, 'widgets')).toEqual(['id']); // status and sql change nothing

    const up = await command('up', current);
    expect(up).toEqual({
      code: 0,
      output: expect.stringMatching(/^applied {2}test\/widgets "widgets" #2 add color$/m),
    });
    expect(await columnsOf(pool, 'widgets')).toEqual(['id', 'color']);
    expect((await recorded(pool)).map((row) => row.version)).toEqual([1, 2]);
    expect(await command('status', current)).toEqual({ code: 0, output: 'up to date: 1 part(s)' });
    expect((await command('sql', current)).output).toBe('-- up to date: no migration pending');

    // A shipped step edited afterwards is named (never run again), not counted as pending.
    const edited = await command('status', [widgets(pool, [v1, { ...v2, statements: ['SELECT 1'] }])]);
    expect(edited.code).toBe(0);
    expect(edited.output).toMatch(/^changed {2}test\/widgets "widgets" #2: applied with other statements/m);
  });

  it('the printed sql, run by hand, brings the database to where up does', async () => {
    const { pool } = await freshDatabase('migrate_sql');
    await widgets(pool, [v1]).create();
    const current = [widgets(pool, [v1, v2])];
    await pool.query((await command('sql', current)).output);
    expect(await command('status', current)).toMatchObject({ code: 0 });
    expect(await columnsOf(pool, 'widgets')).toEqual(['id', 'color']);
  });

  it('createTables applies the same pending migration at start-up; createTables: false only checks', async () => {
    const { pool } = await freshDatabase('migrate_create');
    await widgets(pool, [v1]).create();
    await expect(widgets(pool, [v1, v2], false).ensure()).rejects.toThrow(/table "widgets" has no column "color"/);
    await widgets(pool, [v1, v2]).ensure();
    expect(await columnsOf(pool, 'widgets')).toEqual(['id', 'color']);
    expect((await recorded(pool)).map((row) => row.version)).toEqual([1, 2]);
  });

  it('a table dropped outside its recorded migrations is named with the way back, and comes back once its rows are deleted', async () => {
    const { pool } = await freshDatabase('migrate_dropped');
    await widgets(pool, [v1]).create();
    await pool.query('DROP TABLE "widgets"');
    const refused = widgets(pool, [v1]).ensure();
    await expect(refused).rejects.toThrow(/table "widgets" does not exist/);
    await expect(refused).rejects.toThrow(/recorded as applied in ddd_kit_migrations \(part 'test\/widgets'\)/);
    await pool.query("DELETE FROM ddd_kit_migrations WHERE part = 'test/widgets'");
    await widgets(pool, [v1]).ensure();
    expect(await columnsOf(pool, 'widgets')).toEqual(['id']);
  });

  it('each migration commits with its record: one that fails leaves the earlier ones applied and itself not', async () => {
    const { pool } = await freshDatabase('migrate_fail');
    const broken: PgMigration = {
      name: 'broken',
      statements: ['ALTER TABLE "widgets" ADD COLUMN half text', 'SELECT 1/0'],
    };
    await expect(command('up', [widgets(pool, [v1, broken])])).rejects.toThrow(/division by zero/);
    expect(await columnsOf(pool, 'widgets')).toEqual(['id']);
    expect((await recorded(pool)).map((row) => row.version)).toEqual([1]);
  });

  it('two concurrent ups apply each migration once', async () => {
    const { pool, schema, url } = await freshDatabase('migrate_concurrent');
    // Each step also counts itself: a step run twice would count 2 (and its ALTER would fail).
    const counted: PgMigration[] = [
      {
        name: 'create',
        statements: [...v1.statements, 'CREATE TABLE runs (version int)', 'INSERT INTO runs VALUES (1)'],
      },
      { name: 'add color', statements: [...v2.statements, 'INSERT INTO runs VALUES (2)'] },
    ];
    const pools = [1, 2].map(() => new pg.Pool({ connectionString: url, max: 2 }));
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // Both starters queue behind the schema's lock, then run one after the other.
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext('ddd-kit:schema'), hashtext($1))`, [schema]);
      const ups = pools.map((p) => command('up', [widgets(p, counted)]));
      await waitFor('both starters waiting for the schema lock', async () => {
        const { rows } = await pool.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = hashtext($1)::oid`,
          [schema],
        );
        return rows[0].n === 2;
      });
      await holder.query('COMMIT');
      const outputs = await Promise.all(ups);
      expect(outputs.map((o) => o.code)).toEqual([0, 0]);
      expect(outputs.flatMap((o) => o.output.match(/^applied .*$/gm) ?? []).sort()).toEqual([
        'applied  test/widgets "widgets" #1 create',
        'applied  test/widgets "widgets" #2 add color',
      ]);
      expect((await pool.query('SELECT version FROM runs ORDER BY version')).rows).toEqual([
        { version: 1 },
        { version: 2 },
      ]);
      expect((await recorded(pool)).map((row) => row.version)).toEqual([1, 2]);
    } finally {
      await holder.end();
      for (const p of pools) await p.end();
    }
  });

  it('refuses an unknown command, changing nothing', async () => {
    const { pool } = await freshDatabase('migrate_unknown');
    await expect(schemaCommand('down' as 'up', [widgets(pool, [v1])])).rejects.toThrow(
      /schema command must be one of status, up, sql; got "down"/,
    );
    expect(await columnsOf(pool, 'widgets')).toEqual([]);
  });
});

// ------------------------------------------------------------------- the kit's own parts

/** What a schema is made of, as the catalogue tells it, with the schema's own name taken out. */
async function layout(pool: pg.Pool, schema: string) {
  const columns = await pool.query(
    `SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default
       FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
    [schema],
  );
  const indexes = await pool.query(
    `SELECT tablename, indexname, replace(indexdef, $1 || '.', '') AS indexdef
       FROM pg_indexes WHERE schemaname = $1 ORDER BY tablename, indexname`,
    [schema],
  );
  const constraints = await pool.query(
    `SELECT conrelid::regclass::text AS "table", conname, pg_get_constraintdef(oid) AS definition
       FROM pg_constraint WHERE connamespace = $1::regnamespace ORDER BY 1, 2`,
    [schema],
  );
  return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows };
}

/** Runs `which` over every part, found the way the command finds an application's. */
async function overAllParts(pool: pg.Pool, which: 'status' | 'up') {
  const parts = allParts(pool);
  const lines: string[] = [];
  try {
    const code = await runSchemaCommand(
      which,
      async () => {
        await startAll(parts);
        return { close: async () => undefined };
      },
      (text) => lines.push(text),
    );
    return { code, output: lines.join('\n') };
  } finally {
    await parts.segments.close();
  }
}

describe('a migration whose record does not stay', () => {
  it('is refused after one application, rolled back, naming it, instead of being applied again for ever', async () => {
    const { pool } = await freshDatabase('migrate_unrecorded');
    await widgets(pool, [v1]).create(); // makes ddd_kit_migrations
    await pool.query('DROP TABLE "widgets"');
    await pool.query('DELETE FROM ddd_kit_migrations');
    // Every record written is dropped: the step stays pending after it ran.
    await pool.query('CREATE RULE swallow AS ON INSERT TO ddd_kit_migrations DO INSTEAD NOTHING');
    const schema = widgets(pool, [v1]);
    await expect(schema.create()).rejects.toThrow(
      /Widgets: migration 1 \(create widgets\) was applied but is still pending: its record in ddd_kit_migrations did not stay/,
    );
    // The first application committed; the second, refused, changed nothing more.
    expect(await columnsOf(pool, 'widgets')).toEqual(['id']);
    expect(await recorded(pool)).toEqual([]);
  });
});

describe('the kit parts: one schema whichever way it is made', () => {
  it('createTables, the migrations on a new database, and the last unversioned layout then the migrations give the same schema', async () => {
    const created = await freshDatabase('layout_created');
    const migrated = await freshDatabase('layout_migrated');
    const upgraded = await freshDatabase('layout_upgraded');

    // createTables (the default): each part at its own start-up.
    const parts = allParts(created.pool);
    try {
      await startAll(parts);
    } finally {
      await parts.segments.close();
    }

    expect(await overAllParts(migrated.pool, 'status')).toMatchObject({ code: 1 });
    expect(await overAllParts(migrated.pool, 'up')).toMatchObject({ code: 0 });

    // A database the version before migrations made: its tables, no record of them.
    await upgraded.pool.query(readFileSync(new URL('./fixtures/schema-b2c7726.sql', import.meta.url), 'utf8'));
    const behind = await overAllParts(upgraded.pool, 'status');
    expect(behind.code).toBe(1);
    expect(behind.output).toContain('pending  @ddd-kit/repository/outbox "ddd_kit_outbox" #1 create table');
    expect(await overAllParts(upgraded.pool, 'up')).toMatchObject({ code: 0 });
    expect(await overAllParts(upgraded.pool, 'status')).toMatchObject({ code: 0 });

    const expected = await layout(created.pool, created.schema);
    expect(expected.columns.length).toBeGreaterThan(40);
    expect(expected.indexes.map((row) => row.indexname)).toContain('ddd_kit_outbox_pending_idx');
    expect(await layout(migrated.pool, migrated.schema)).toEqual(expected);
    expect(await layout(upgraded.pool, upgraded.schema)).toEqual(expected);
    expect(await recorded(upgraded.pool)).toEqual(await recorded(created.pool));
    expect(await recorded(migrated.pool)).toEqual(await recorded(created.pool));
    expect(new Set((await recorded(created.pool)).map((row) => row.part))).toEqual(
      new Set([
        '@ddd-kit/id-generator/machine-ids',
        '@ddd-kit/id-generator/segments',
        '@ddd-kit/idempotency',
        '@ddd-kit/prepare-key',
        '@ddd-kit/repository',
        '@ddd-kit/repository/outbox',
      ]),
    );
  });
});
