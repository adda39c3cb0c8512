// The complete apps of docs/orms.md run as written (compiled and started like the other complete
// apps, see complete-app.ts): a sign-up commits the ORM's entity (TypeORM's, main.ts; Drizzle's,
// drizzle.ts) and ddd-kit's aggregate together, and a taken email is a 409 that leaves the entity
// of the refused sign-up uncommitted too.
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { startCompleteApp } from './complete-app.js';

/** The rows `text` returns, on a connection of its own. */
async function query(url: string, text: string): Promise<Array<Record<string, string>>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

describe('the complete apps of docs/orms.md', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it.each([
    { orm: 'TypeORM', main: 'main' },
    { orm: 'Drizzle', main: 'drizzle', ddl: 'CREATE TABLE profiles (id text PRIMARY KEY, name text NOT NULL)' },
  ])(
    'one transaction for the $orm entity and the aggregate: a sign-up commits both, a taken email neither',
    async ({ main, ddl }) => {
      const schema = await postgresSchema('docs_orm_app');
      cleanups.push(schema.drop);
      if (ddl) await query(schema.url, ddl); // what drizzle-kit push would create
      const app = await startCompleteApp('docs/orms.md', { DATABASE_URL: schema.url }, main);
      cleanups.push(app.remove);
      const signUp = (email: string, name: string) =>
        fetch(`${app.base}/signups`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, name }),
        });
      try {
        await waitFor('the app listening', async () => {
          if (app.child.exitCode !== null) throw new Error(`the app exited:\n${app.output()}`);
          return (await fetch(app.base).catch(() => undefined))?.status;
        });
        expect((await signUp('ann@example.com', 'Ann')).status).toBe(201);
        expect((await signUp('ann@example.com', 'Bob')).status).toBe(409);
        expect(await query(schema.url, 'SELECT name FROM profiles')).toEqual([{ name: 'Ann' }]);
        const accounts = await query(schema.url, 'SELECT xmin::text FROM accounts');
        expect(accounts).toEqual(await query(schema.url, 'SELECT xmin::text FROM profiles')); // one transaction
      } finally {
        app.child.kill('SIGTERM');
        const { code, signal } = await app.exited;
        expect(code === 0 || signal === 'SIGTERM').toBe(true);
      }
    },
    120_000,
  );
});
