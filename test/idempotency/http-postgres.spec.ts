// @Idempotent() routes on PostgreSQL with @nestjs-cls/transactional (the application runs in a
// child process: see support/http-postgres.fixture.mjs). With the store's `transaction` option
// set to the TransactionHost, the handler's @Transactional() service joins the transaction the
// record is written in: record, effect and rollback are one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fork, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import request from 'supertest';
import { assertBuilt } from '../support/built.js';
import { postgresSchema } from '../support/servers.js';

const FIXTURE = new URL('./support/http-postgres.fixture.mjs', import.meta.url);

async function startApp(env: Record<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  assertBuilt('libs/idempotency', 'libs/transactional-adapter-pg');
  const child: ChildProcess = fork(FIXTURE, [], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the fixture exited (${code}):\n${stderr}`)));
    child.once('message', (message: { port: number }) => resolve(message.port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('stop');
      await exited;
    },
  };
}

describe('@Idempotent() on PostgreSQL with @Transactional()', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    schema = await postgresSchema('idem_http_pg');
    pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    await pool.query('CREATE TABLE orders (item text NOT NULL)');
  });

  afterAll(async () => {
    await pool?.end();
    await schema?.drop();
  });

  const count = async (item: string) =>
    Number((await pool.query('SELECT count(*)::int AS n FROM orders WHERE item = $1', [item])).rows[0].n);

  describe('with the store opening transactions through the TransactionHost', () => {
    let app: Awaited<ReturnType<typeof startApp>>;

    beforeAll(async () => {
      app = await startApp({ FIXTURE_DATABASE_URL: schema.url });
    }, 60_000);

    afterAll(async () => {
      await app?.stop();
    });

    it('runs the handler in the transaction of the record, and replays its response once committed', async () => {
      const first = await request(app.url).post('/orders').set('Idempotency-Key', '"o-1"').send({ item: 'a' });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({ item: 'a', pendingSeen: 1 });
      const again = await request(app.url).post('/orders').set('Idempotency-Key', '"o-1"').send({ item: 'a' });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await count('a')).toBe(1);
    });

    it('rolls the effect and the record back together when the handler fails', async () => {
      const send = () =>
        request(app.url).post('/orders').set('Idempotency-Key', '"o-2"').send({ item: 'b', fail: true });
      expect((await send()).status).toBe(500);
      expect(await count('b')).toBe(0);
      // Nothing was kept: the same request runs again (and fails again), never a replay.
      const retried = await send();
      expect(retried.status).toBe(500);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
    });
  });

  describe('without the option', () => {
    let app: Awaited<ReturnType<typeof startApp>>;

    beforeAll(async () => {
      app = await startApp({ FIXTURE_DATABASE_URL: schema.url, FIXTURE_MODE: 'own-transaction' });
    }, 60_000);

    afterAll(async () => {
      await app?.stop();
    });

    it('runs @Transactional() in a transaction apart from the record (what the option is for)', async () => {
      const first = await request(app.url).post('/orders').set('Idempotency-Key', '"o-3"').send({ item: 'c' });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({ item: 'c', pendingSeen: 0 });
    });
  });
});
