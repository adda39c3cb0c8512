import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { PostgresPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { startPostgresCluster } from '../support/server-provider.js';
import { waitFor } from '../support/wait.js';

// A PostgreSQL restart (what a failover or a minor upgrade does) ends every session with 57P01.
// pg-pool listens for errors on idle connections only: a connection checked out by a request
// that is waiting on something else (another store, a slow handler) gets the server's FATAL
// message with nobody listening, and Node ends the process on the unhandled 'error' event. A
// pool given to ddd-kit, with no listener of the user's own, must survive it: the request fails,
// and the next one is served once the server is back.
describe('a PostgreSQL restart while ddd-kit holds pooled connections', () => {
  let server: Awaited<ReturnType<typeof startPostgresCluster>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    server = await startPostgresCluster();
    pool = new pg.Pool({ connectionString: server.url, max: 4 }); // no 'error' listener of its own
  });
  afterAll(async () => {
    await pool.end();
    await server.stop();
  });

  it.each(['fast', 'immediate'] as const)(
    '%s restart: the transaction in progress fails, the process stays up, and the next one commits',
    async (mode) => {
      const keys = new PostgresPrepareKeyFactory(pool, { table: `keys_${mode}`, sweepIntervalMs: 0 }).create<{
        id: string;
      }>('username');
      expect(await keys.prepare('before', { id: '1' })).toBe(true);
      // Idle connections in the pool too: two more checked out and returned.
      await Promise.all([pool.query('SELECT 1'), pool.query('SELECT 1'), pool.query('SELECT 1')]);
      const inProgress = runInTransaction(pool, async () => {
        expect(await keys.prepare(`held-${mode}`, { id: '2' })).toBe(true);
        await server.restart({ mode }); // the connection sits idle in the transaction meanwhile
        return keys.prepare(`after-${mode}`, { id: '2' });
      });
      await expect(inProgress).rejects.toThrow();
      // Rolled back with the connection: the key taken inside the transaction is free.
      await waitFor('a statement to succeed after the restart', () => keys.get('before').catch(() => undefined));
      expect(await keys.get(`held-${mode}`)).toBeUndefined();
      expect(await runInTransaction(pool, () => keys.prepare(`after-${mode}`, { id: '3' }))).toBe(true);
    },
  );
});
