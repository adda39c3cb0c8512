import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import pg from 'pg';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

// The reader every ddd-kit PostgreSQL part keeps a copy of (COMMON protocol), written out here
// as a part would: nothing imported from this package.
interface Ambient {
  pool: object;
  client: { query(...args: any[]): Promise<any> };
  outer?: Ambient;
  afterCommit?: (callback: () => unknown) => void;
}
const KEY = Symbol.for('@ddd-kit/pg-ambient-transaction');
const storage: AsyncLocalStorage<Ambient> = ((globalThis as any)[KEY] ??= new AsyncLocalStorage<Ambient>());
function queryableFor(pool: object): { query(...args: any[]): Promise<any> } {
  for (let t = storage.getStore(); t; t = t.outer) if (t.pool === pool) return t.client;
  return pool as pg.Pool;
}

/**
 * A client whose COMMIT alone has a timeout: the proxy holds the reply to it, so only a timeout
 * ends the wait, and any length proves the same. The other statements have none, so a busy
 * machine cannot time them out.
 */
class CommitTimeoutClient extends pg.Client {
  override query(...args: any[]): any {
    if (args[0] === 'COMMIT') args[0] = { text: 'COMMIT', query_timeout: 100 };
    return (super.query as (...a: any[]) => any)(...args);
  }
}

describe('runInTransaction', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;
  let other: pg.Pool;

  beforeAll(async () => {
    schema = await postgresSchema('run_in_tx');
    pool = new pg.Pool({ connectionString: schema.url, max: 4 });
    other = new pg.Pool({ connectionString: schema.url, max: 2 });
    await pool.query('CREATE TABLE notes (id text PRIMARY KEY, body text NOT NULL)');
  });
  afterEach(async () => {
    await pool.query('TRUNCATE notes');
  });
  afterAll(async () => {
    await pool.end();
    await other.end();
    await schema.drop();
  });

  const stored = async (): Promise<string[]> =>
    (await pool.query('SELECT id FROM notes ORDER BY id')).rows.map((r) => r.id);
  const txid = async (queryable: { query(...args: any[]): Promise<any> }): Promise<string> =>
    (await queryable.query('SELECT txid_current()::text AS id')).rows[0].id;

  it('commits what fn wrote and returns what fn returned; the connection goes back to the pool', async () => {
    const result = await runInTransaction(pool, async (client) => {
      await client.query('INSERT INTO notes VALUES ($1, $2)', ['a', 'first']);
      // Not visible outside before the commit.
      expect((await other.query('SELECT count(*)::int AS n FROM notes')).rows[0].n).toBe(0);
      return 42;
    });
    expect(result).toBe(42);
    expect(await stored()).toEqual(['a']);
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it('rolls back when fn throws and rethrows that very error', async () => {
    const failure = new Error('use case failed');
    const error = await runInTransaction(pool, async (client) => {
      await client.query('INSERT INTO notes VALUES ($1, $2)', ['b', 'never']);
      throw failure;
    }).catch((e: unknown) => e);
    expect(error).toBe(failure);
    expect(await stored()).toEqual([]);
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it('publishes the transaction for every part on that pool: their statements run on its client, in it', async () => {
    expect(queryableFor(pool)).toBe(pool);
    await expect(
      runInTransaction(pool, async (client) => {
        expect(queryableFor(pool)).toBe(client);
        expect(queryableFor(other)).toBe(other);
        // A part's statement, through the protocol only, lands in this transaction.
        expect(await txid(queryableFor(pool))).toBe(await txid(client));
        await queryableFor(pool).query('INSERT INTO notes VALUES ($1, $2)', ['c', 'by a part']);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await stored()).toEqual([]);
    expect(queryableFor(pool)).toBe(pool);
  });

  it('propagation: required (default) joins the running transaction; requiresNew commits on its own', async () => {
    await expect(
      runInTransaction(pool, async (outer) => {
        const outerId = await txid(outer);
        await runInTransaction(pool, async (joined) => {
          expect(joined).toBe(outer);
          await joined.query('INSERT INTO notes VALUES ($1, $2)', ['joined', 'x']);
        });
        await runInTransaction(
          pool,
          async (own) => {
            expect(own).not.toBe(outer);
            expect(await txid(queryableFor(pool))).not.toBe(outerId);
            await queryableFor(pool).query('INSERT INTO notes VALUES ($1, $2)', ['independent', 'x']);
          },
          { propagation: 'requiresNew' },
        );
        // Back in the outer transaction.
        expect(queryableFor(pool)).toBe(outer);
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect(await stored()).toEqual(['independent']);
  });

  it('transactions on two pools nest: each part finds the one of its own pool', async () => {
    await runInTransaction(pool, async (a) => {
      await runInTransaction(other, async (b) => {
        expect(queryableFor(pool)).toBe(a);
        expect(queryableFor(other)).toBe(b);
      });
    });
  });

  it('isolation level and read-only reach BEGIN', async () => {
    await runInTransaction(
      pool,
      async (client) => {
        expect((await client.query('SHOW transaction_isolation')).rows[0].transaction_isolation).toBe('serializable');
        expect((await client.query('SHOW transaction_read_only')).rows[0].transaction_read_only).toBe('on');
      },
      { isolationLevel: 'SERIALIZABLE', readOnly: true },
    );
    const error = await runInTransaction(pool, (client) => client.query("INSERT INTO notes VALUES ('ro', 'x')"), {
      readOnly: true,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '25006' }); // read_only_sql_transaction
    expect(await stored()).toEqual([]);
  });

  it('refuses bad options before taking a connection', async () => {
    const fresh = new pg.Pool({ connectionString: schema.url });
    try {
      const bad = [
        { isolationLevel: 'SERIALIZABLE; DROP TABLE notes' },
        { isolationLevel: 'serializable' },
        { readOnly: 'yes' },
        { propagation: 'nested' },
      ];
      for (const options of bad) {
        await expect(runInTransaction(fresh, async () => 1, options as never)).rejects.toBeInstanceOf(TypeError);
      }
      await expect(runInTransaction({} as pg.Pool, async () => 1)).rejects.toThrow(/pg\.Pool/);
      expect(fresh.totalCount).toBe(0);
    } finally {
      await fresh.end();
    }
  });

  it('afterCommit callbacks run after COMMIT, outside the transaction, and never after a rollback', async () => {
    const seen: string[] = [];
    await runInTransaction(pool, async (client) => {
      await client.query('INSERT INTO notes VALUES ($1, $2)', ['ac', 'x']);
      storage.getStore()!.afterCommit!(async () => {
        // Committed, visible to anyone, and no transaction is ambient any more.
        seen.push(`visible=${(await other.query('SELECT count(*)::int AS n FROM notes')).rows[0].n}`);
        seen.push(`ambient=${queryableFor(pool) === pool ? 'none' : 'still'}`);
      });
      seen.push('fn done');
    });
    expect(seen).toEqual(['fn done', 'visible=1', 'ambient=none']);

    const never: string[] = [];
    await expect(
      runInTransaction(pool, async () => {
        storage.getStore()!.afterCommit!(() => void never.push('ran'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(never).toEqual([]);
  });

  it('work left running after the transaction ended is refused, never sent on a connection the pool gave to someone else', async () => {
    let late: Promise<unknown> | undefined;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await runInTransaction(pool, async () => {
      late = gate.then(() => queryableFor(pool).query('INSERT INTO notes VALUES ($1, $2)', ['late', 'x']));
    });
    release();
    await expect(late).rejects.toThrow(/has ended/);
    expect(await stored()).toEqual([]);
  });

  describe('under faults (proxy in front of PostgreSQL)', () => {
    let proxy: FaultProxy;
    let faulty: pg.Pool;

    beforeAll(async () => {
      const proxied = await proxyUrl('postgres', schema.url);
      proxy = proxied.proxy;
      faulty = new pg.Pool({ connectionString: proxied.url, max: 2, Client: CommitTimeoutClient });
    });
    afterEach(() => proxy.clear());
    afterAll(async () => {
      await faulty.end();
      await proxy.close();
    });

    it.each(['cut', 'hold'] as const)(
      'a lost reply to COMMIT (then %s) is an error (the outcome is unknown: here it committed); the connection is destroyed, never reused',
      async (then) => {
        proxy.dropReply({ match: 'COMMIT', then });
        const error = await runInTransaction(faulty, (client) =>
          client.query('INSERT INTO notes VALUES ($1, $2)', [`commit-lost-${then}`, 'x']),
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        // The server got the COMMIT (its reply is what was lost); held, the client may give up
        // before the server has applied it.
        const applied = await waitFor('the COMMIT whose reply was lost to be applied', async () => {
          const ids = await stored();
          return ids.length > 0 ? ids : null;
        });
        expect(applied).toEqual([`commit-lost-${then}`]);
        // A connection whose COMMIT is still unanswered (held) must not serve the next transaction.
        expect(faulty.totalCount).toBe(0);
      },
    );

    it('a connection lost inside the transaction: fn fails, nothing commits, the process survives', async () => {
      const error = await runInTransaction(faulty, async (client) => {
        await client.query('INSERT INTO notes VALUES ($1, $2)', ['cut', 'x']);
        // The client learns of the reset before its next statement (it reports the error, then 'end').
        const ended = new Promise((resolve) => client.once('end', resolve));
        proxy.resetAll();
        await waitFor('the client to see its connection reset', ended);
        await client.query('SELECT 1');
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(await stored()).toEqual([]);
      expect(faulty.totalCount).toBe(0);
      // The pool works again afterwards.
      await runInTransaction(faulty, (client) => client.query('INSERT INTO notes VALUES ($1, $2)', ['after', 'x']));
      expect(await stored()).toEqual(['after']);
    });
  });
});
