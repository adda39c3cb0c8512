import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { collectSchemaStatements } from '@ddd-kit/core/postgres';
import { IdGeneratorModule, PostgresMachineIdDistributor } from '@ddd-kit/id-generator';
import { PostgresPrepareKeyFactory, PreparableKey, PrepareKey, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { postgresSchema } from '../support/servers.js';

// The schema as one thing: one call gives every statement the application's configuration
// needs, in order, without creating (or needing) a table; the same statements make the
// application boot with createTables: false.

@PreparableKey('schema-sku')
abstract class SkuPrepareKey extends PrepareKey<string> {}

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;

beforeAll(async () => {
  schema = await postgresSchema('schema_statements');
  pool = new pg.Pool({ connectionString: schema.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

/** An application of PostgreSQL parts that migrates: none creates its tables. */
function appModule() {
  @Module({
    imports: [
      PrepareKeyModule.forRoot({
        factory: new PostgresPrepareKeyFactory(pool, { table: 'skus', createTables: false, sweepIntervalMs: 0 }),
      }),
      IdGeneratorModule.forRoot({
        namespace: 'schema-test',
        machine: new PostgresMachineIdDistributor(pool, { createTables: false }),
      }),
    ],
  })
  class AppModule {}
  return AppModule;
}

const tables = async () =>
  (
    await pool.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`,
    )
  ).rows.map((r: { table_name: string }) => r.table_name);

describe('collectSchemaStatements', () => {
  it('prints every table the configuration needs, in order, touching none; they make the application boot', async () => {
    await expect(
      NestFactory.createApplicationContext(appModule(), { logger: false, abortOnError: false }),
    ).rejects.toThrow(/does not exist\. Create it in a migration with the statements of collectSchemaStatements\(\)/);

    const statements = await collectSchemaStatements(() =>
      NestFactory.createApplicationContext(appModule(), { logger: false, abortOnError: false }),
    );
    expect(await tables()).toEqual([]);
    // In the order the application asks: the machine ID is leased while providers are built, the
    // reservations' table is ensured at module init.
    expect(statements.map((s) => /^CREATE (?:UNIQUE )?(?:TABLE|INDEX) IF NOT EXISTS (\S+)/.exec(s)?.[1])).toEqual([
      '"ddd_kit_machine_id_namespaces"',
      '"ddd_kit_machine_ids"',
      '"ddd_kit_machine_ids_instance"',
      '"skus"',
      '"skus_drop_at"',
    ]);

    for (const statement of statements) await pool.query(statement);
    const app = await NestFactory.createApplicationContext(appModule(), { logger: false });
    try {
      expect(await app.get(SkuPrepareKey).prepare('sku-1', 'a')).toBe(true);
    } finally {
      await app.close();
    }
    expect(await tables()).toEqual(['ddd_kit_machine_id_namespaces', 'ddd_kit_machine_ids', 'skus']);
  });
});
