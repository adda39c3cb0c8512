// The complete app of docs/orms.md runs as written (compiled and started like the other complete
// apps, see complete-app.ts): a sign-up commits TypeORM's entity and ddd-kit's aggregate together,
// and a taken email is a 409 that leaves the entity of the refused sign-up uncommitted too.
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { startCompleteApp } from './complete-app.js';

describe('the complete app of docs/orms.md', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('one transaction for the TypeORM entity and the aggregate: a sign-up commits both, a taken email neither', async () => {
    const schema = await postgresSchema('docs_orm_app');
    cleanups.push(schema.drop);
    const app = await startCompleteApp('docs/orms.md', { DATABASE_URL: schema.url });
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
      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      try {
        const names = (await client.query('SELECT name FROM profiles')).rows.map((r) => r.name);
        const accounts = (await client.query('SELECT xmin::text FROM accounts')).rows;
        const profiles = (await client.query('SELECT xmin::text FROM profiles')).rows;
        expect(names).toEqual(['Ann']);
        expect(accounts).toEqual(profiles); // written by one transaction
      } finally {
        await client.end();
      }
    } finally {
      app.child.kill('SIGTERM');
      const { code, signal } = await app.exited;
      expect(code === 0 || signal === 'SIGTERM').toBe(true);
    }
  }, 120_000);
});
