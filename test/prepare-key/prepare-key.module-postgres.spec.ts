import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import {
  PostgresPrepareKeyFactory,
  PreparableKey,
  PrepareKey,
  PrepareKeyModule,
  type PrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import { freePort } from '../support/server-provider.js';
import { postgresSchema } from '../support/servers.js';

// PrepareKeyModule on PostgreSQL: the factory's table exists before the application takes a
// request (made at start-up, on a connection of its own), and a database that does not answer
// fails the start-up with a named error instead of a bare ECONNREFUSED later.

@PreparableKey('pg-module-sku')
abstract class SkuPrepareKey extends PrepareKey<string> {}

function boot(factory: PrepareKeyFactory) {
  @Module({ imports: [PrepareKeyModule.forRoot({ factory })] })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
}

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
/** A port that accepts nothing: every connection attempt is refused at once. */
let closedPort: number;

beforeAll(async () => {
  schema = await postgresSchema('pk_module');
  pool = new pg.Pool({ connectionString: schema.url, max: 2 });
  closedPort = await freePort();
});
afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

describe('PrepareKeyModule with PostgresPrepareKeyFactory', () => {
  it('creates the table at start-up, before any request', async () => {
    const factory = new PostgresPrepareKeyFactory(pool, { table: 'made_at_start', sweepIntervalMs: 0 });
    const app = await boot(factory);
    try {
      expect((await pool.query(`SELECT to_regclass('made_at_start') IS NOT NULL AS present`)).rows[0].present).toBe(
        true,
      );
      expect(await app.get(SkuPrepareKey).prepare('s1', 'a')).toBe(true);
    } finally {
      await app.close();
      await factory.close();
    }
  });

  it('a given pool whose database does not answer fails the start-up, naming the part and what to do', async () => {
    const down = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${closedPort}/none` });
    down.on('error', () => undefined);
    try {
      const factory = new PostgresPrepareKeyFactory(down, { sweepIntervalMs: 0 });
      await expect(boot(factory)).rejects.toMatchObject({
        code: 'PG_CONNECTION',
        message: expect.stringMatching(
          new RegExp(
            `^PostgresPrepareKeyFactory: cannot reach PostgreSQL at pg\\.Pool #\\d+ \\(postgres@127\\.0\\.0\\.1:${closedPort}/none\\).*Start PostgreSQL`,
          ),
        ),
      });
    } finally {
      await down.end();
    }
  });

  it('createTables: false checks the table at start-up and names what to create', async () => {
    const factory = new PostgresPrepareKeyFactory(pool, {
      table: 'never_made',
      createTables: false,
      sweepIntervalMs: 0,
    });
    await expect(boot(factory)).rejects.toThrow(
      /table "never_made" does not exist.*CREATE TABLE IF NOT EXISTS "never_made"/s,
    );
  });
});
