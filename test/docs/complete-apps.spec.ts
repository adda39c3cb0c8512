// The two complete apps the root README links (docs/postgresql.md, docs/redis-mongodb.md) run as
// written: their `ts file=…` blocks are compiled as a user's build would, started with
// `node main.js` against real servers (npm test builds the libraries first), and then answer:
// readiness 200 with every entry up, a product added, its SKU a 409 the second time, the read
// model fed by the outbox (PostgreSQL), and SIGTERM ends the process cleanly.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mongoUri, postgresSchema, redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { startCompleteApp, waitUntilReady, type CompleteApp } from './complete-app.js';

const post = (app: CompleteApp, path: string, body: unknown) =>
  fetch(`${app.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/**
 * SIGTERM, then how the process ended: Nest's shutdown hooks close the app and re-raise the
 * signal, so a clean stop ends by SIGTERM (or code 0), within 15 s, with nothing on stderr
 * that says otherwise; SIGKILL means it hung.
 */
async function stop(app: CompleteApp): Promise<string> {
  if (app.child.exitCode !== null) return `exited early with ${app.child.exitCode}`;
  app.child.kill('SIGTERM');
  const timer = setTimeout(() => app.child.kill('SIGKILL'), 15_000);
  try {
    const { code, signal } = await app.exited;
    return code === 0 || signal === 'SIGTERM' ? 'clean' : `${code ?? signal}`;
  } finally {
    clearTimeout(timer);
  }
}

/** Both apps' readiness: reservations, the machine-ID lease, the stores and the outbox. */
const EVERY_ENTRY_UP = {
  status: 'ok',
  details: {
    'prepare-key': { status: 'up' },
    'machine-id': { status: 'up' },
    repository: { status: 'up' },
    outbox: { status: 'up' },
  },
};

describe('the complete apps the root README links', () => {
  const cleanups: Array<() => Promise<void>> = [];

  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('docs/postgresql.md: ready, a product in one transaction, its SKU taken, the read model fed, a clean stop', async () => {
    const schema = await postgresSchema('docs_postgres_app');
    cleanups.push(schema.drop);
    const app = await startCompleteApp('docs/postgresql.md', { DATABASE_URL: schema.url });
    cleanups.push(app.remove);
    try {
      expect(await waitUntilReady(app)).toMatchObject(EVERY_ENTRY_UP);
      const added = await post(app, '/products', { sku: 'SKU-1', price: 250 });
      expect(added.status).toBe(201);
      const { id } = (await added.json()) as { id: string };
      expect(typeof id).toBe('string');
      expect((await post(app, '/products', { sku: 'SKU-1', price: 1 })).status).toBe(409);
      const price = await waitFor('the read model', async () => {
        if (app.child.exitCode !== null) throw new Error(`the app exited:\n${app.output()}`);
        const response = await fetch(`${app.base}/prices/${encodeURIComponent(id)}`);
        return response.status === 200 ? ((await response.json()) as { price: number }) : undefined;
      });
      expect(price).toEqual({ price: 250 });
    } finally {
      expect(await stop(app)).toBe('clean');
    }
  }, 120_000);

  it('docs/redis-mongodb.md: ready, a product, its SKU taken, a clean stop', async () => {
    const app = await startCompleteApp('docs/redis-mongodb.md', {
      REDIS_URL: redisUrl(),
      MONGODB_URI: withDatabase(mongoUri(), uniqueName('docs_redis_mongo_app')),
    });
    cleanups.push(app.remove);
    try {
      expect(await waitUntilReady(app)).toMatchObject(EVERY_ENTRY_UP);
      // The app's key prefix is fixed, so the SKU is unique to this run.
      const sku = uniqueName('sku');
      const added = await post(app, '/products', { sku });
      expect(added.status).toBe(201);
      expect(typeof ((await added.json()) as { id: string }).id).toBe('string');
      expect((await post(app, '/products', { sku })).status).toBe(409);
    } finally {
      expect(await stop(app)).toBe('clean');
    }
  }, 120_000);
});

/** The MongoDB URI with a database of this run's own. */
function withDatabase(uri: string, database: string): string {
  const url = new URL(uri);
  url.pathname = `/${database}`;
  return url.toString();
}
