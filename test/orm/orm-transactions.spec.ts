// ddd-kit's PostgreSQL parts in an ORM's own transaction (TypeORM, Drizzle on node-postgres),
// opened by @nestjs-cls/transactional's published adapter for that ORM and joined through
// OrmTransactionsModule. Each test gets a schema of its own and an application in a child process
// (support/orm.fixture.mjs; see child-app.ts for why a child), and checks the database itself.
import { afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ChildApp } from '../support/child-app.js';
import { postgresSchema, postgresUrl } from '../support/servers.js';

const FIXTURE = new URL('./support/orm.fixture.mjs', import.meta.url);
const PACKAGES = ['libs/transactional-adapter-pg', 'libs/repository', 'libs/prepare-key', 'libs/idempotency'];

interface Rows {
  notes: string[];
  products: string[];
  reservations: number;
  outbox: number;
  idempotency: number;
  /** The distinct transactions (xmin) that wrote every row above. */
  writers: string[];
}

describe.each(['typeorm', 'drizzle'])('%s: one transaction for the entity and the ddd-kit parts', (orm) => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let app: ChildApp | undefined;

  const start = () =>
    ChildApp.start(FIXTURE, { FIXTURE_DATABASE_URL: schema.url, FIXTURE_ORM: orm }, PACKAGES).then(
      (started) => (app = started),
    );

  async function rows(): Promise<Rows> {
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      const read = async (table: string) =>
        (await client.query(`SELECT id::text, xmin::text FROM ${table} ORDER BY id`)).rows;
      const notes = await read('notes');
      const products = await read('products');
      const reservations = (await client.query('SELECT xmin::text FROM ddd_kit_prepare_keys')).rows;
      const outbox = (await client.query('SELECT xmin::text FROM ddd_kit_outbox')).rows;
      const idempotency = (await client.query('SELECT xmin::text FROM ddd_kit_idempotency')).rows;
      const writers = new Set(
        [...notes, ...products, ...reservations, ...outbox, ...idempotency].map((r) => r.xmin as string),
      );
      return {
        notes: notes.map((r) => r.id),
        products: products.map((r) => r.id),
        reservations: reservations.length,
        outbox: outbox.length,
        idempotency: idempotency.length,
        writers: [...writers],
      };
    } finally {
      await client.end();
    }
  }

  afterEach(async () => {
    if (app) await app.stop().catch(() => undefined);
    app = undefined;
    await schema?.drop();
  });

  async function freshApp(): Promise<ChildApp> {
    schema = await postgresSchema(`orm_${orm}`);
    const admin = new pg.Client({ connectionString: schema.url });
    await admin.connect();
    await admin.query('CREATE TABLE notes (id text PRIMARY KEY, body text NOT NULL)');
    await admin.end();
    return start();
  }

  it('a use case that throws leaves nothing: no entity, aggregate, reservation, event or idempotency record', async () => {
    const app = await freshApp();
    await expect(app.call('register', 'p1', 'SKU-1', { fail: true })).rejects.toThrow('use case failed');
    expect(await rows()).toEqual({ notes: [], products: [], reservations: 0, outbox: 0, idempotency: 0, writers: [] });
    // The SKU is free again.
    await app.call('register', 'p2', 'SKU-1');
    expect((await rows()).products).toEqual(['p2']);
  });

  it('a use case that commits leaves all (idempotency record included), written by one transaction', async () => {
    const app = await freshApp();
    const seen = await app.call<{ entity: string; dddKit: string }>('register', 'p1', 'SKU-1');
    expect(seen.dddKit).toBe(seen.entity); // txid_current() through the ORM and through the repository
    const after = await rows();
    expect(after).toMatchObject({ notes: ['p1'], products: ['p1'], reservations: 1, outbox: 1, idempotency: 1 });
    expect(after.writers).toEqual([String(BigInt(seen.entity) % 2n ** 32n)]);
  });

  it('two concurrent use cases on one key: one commits, the other gets the conflict and leaves nothing', async () => {
    const app = await freshApp();
    const outcomes = await app.call<string[]>('race', 'SKU-1');
    expect([...outcomes].sort()).toEqual(['UNIQUE_KEY_VIOLATION', 'committed']);
    const winner = `race-${outcomes.indexOf('committed') + 1}`;
    const after = await rows();
    expect(after).toMatchObject({ notes: [winner], products: [winner], reservations: 1, outbox: 1 });
    expect(after.writers).toHaveLength(1);
  });

  it.each(['entity', 'aggregate'])(
    'the process killed (SIGKILL) after the %s write, before the commit, leaves nothing and holds no key',
    async (step) => {
      const app = await freshApp();
      await expect(app.call('register', 'p1', 'SKU-1', { killAfter: step })).rejects.toThrow(/exited/);
      expect(await rows()).toEqual({
        notes: [],
        products: [],
        reservations: 0,
        outbox: 0,
        idempotency: 0,
        writers: [],
      });
      const again = await start();
      await again.call('register', 'p2', 'SKU-1');
      expect(await rows()).toMatchObject({ notes: ['p2'], products: ['p2'], reservations: 1, outbox: 1 });
    },
  );

  it("a part on another database than the ORM's transaction fails naming both, and nothing commits", async () => {
    const other = new URL(postgresUrl());
    const database = other.pathname;
    other.pathname = '/postgres';
    schema = await postgresSchema(`orm_${orm}`);
    const admin = new pg.Client({ connectionString: schema.url });
    await admin.connect();
    await admin.query('CREATE TABLE notes (id text PRIMARY KEY, body text NOT NULL)');
    await admin.end();
    app = await ChildApp.start(
      FIXTURE,
      { FIXTURE_DATABASE_URL: schema.url, FIXTURE_ORM: orm, FIXTURE_OTHER_URL: other.toString() },
      PACKAGES,
    );
    const failure = app.call('onOtherDatabase', 'p1');
    await expect(failure).rejects.toMatchObject({ code: 'PG_FOREIGN_TRANSACTION' });
    const message = await failure.catch((error: Error) => error.message);
    expect(message).toContain('/postgres');
    expect(message).toContain(`${database})`);
    expect((await rows()).notes).toEqual([]);
  });

  it.each([
    ['nested', false, { notes: ['outer'], products: ['after'] }], // the savepoint's aggregate undone
    ['requiresNew', true, { notes: [], products: ['inner'] }], // committed on its own
    ['notSupported', true, { notes: [], products: ['inner'] }], // autocommitted
  ])('the parts follow the propagation: %s (outer fails: %s)', async (propagation, fail, left) => {
    const app = await freshApp();
    const outcome = app.call('withInner', propagation, 'inner', fail);
    if (fail) await expect(outcome).rejects.toThrow('outer failed');
    else await outcome;
    expect(await rows()).toMatchObject(left);
  });

  it('a statement left running after the commit is refused', async () => {
    const app = await freshApp();
    await expect(app.call('registerLeavingLateWork', 'p1', 'SKU-1')).rejects.toMatchObject({
      code: 'PG_TRANSACTION_ENDED',
    });
    expect(await rows()).toMatchObject({ notes: ['p1'], products: ['p1'], reservations: 1, outbox: 1 });
  });
});
