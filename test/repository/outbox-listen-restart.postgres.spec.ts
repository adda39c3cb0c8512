import { afterAll, beforeAll, describe, it } from '@jest/globals';
import pg from 'pg';
import { PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { startPostgresCluster } from '../support/server-provider.js';
import { waitFor } from '../support/wait.js';

// The outbox's LISTEN connection is a connection of its own, outside any pool: a PostgreSQL
// restart ends it (57P01 on a fast stop, 57P02 on an immediate one). It must come back on its
// own, with the process up, and hear other processes' notifications again.
describe('the PostgreSQL outbox LISTEN connection across restarts of its server', () => {
  let server: Awaited<ReturnType<typeof startPostgresCluster>>;
  let pool: pg.Pool;
  let store: PostgresOutboxStore;
  let heard = 0;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    server = await startPostgresCluster();
    pool = new pg.Pool({ connectionString: server.url, max: 2 });
    store = new PostgresOutboxStore({ pool, table: 'outbox', notifyChannel: 'outbox_restart' });
    stop = await store.watch(() => heard++);
  });
  afterAll(async () => {
    await stop?.();
    await pool.end();
    await server.stop();
  });

  /** A NOTIFY from another connection, as another process's write sends it. */
  const notifyFromElsewhere = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query("SELECT pg_notify('outbox_restart', '')");
    } finally {
      await client.end();
    }
  };

  it.each(['fast', 'immediate', 'fast'] as const)(
    'after a %s restart it listens again, with no restart of the process',
    async (mode) => {
      const before = heard;
      await server.restart({ mode });
      // Until the connection is back a notification is lost (the relay polls meanwhile): one is
      // sent on each look. Once back, the store calls the listener once to catch up, and then
      // once for each notification heard: two more calls mean one was heard.
      await waitFor(`a notification heard after the ${mode} restart`, async () => {
        await notifyFromElsewhere();
        return heard >= before + 2;
      });
    },
  );
});
