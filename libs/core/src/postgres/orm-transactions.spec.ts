// joinOrmTransactions on a stand-in ORM (no database): where statements go, what waits for the
// commit, and what is refused. On the real PostgreSQL with TypeORM and Drizzle:
// test/orm/orm-transactions.spec.ts.
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from '@jest/globals';
import { activeTransactionFor, queryableFor } from './ambient-transaction.js';
import { joinOrmTransactions, type OrmTransactionSeam } from './orm-transactions.js';
import type { PgPool, PgQueryable } from './pg.interfaces.js';
import { PgTransactionEndedError } from '../errors.js';

/** A connection that records the statements it received. */
const connection = (name: string, sent: string[]): PgQueryable => ({
  query: async (text) => {
    sent.push(`${name}:${String(text)}`);
    return { rows: [], rowCount: 0 };
  },
});

/**
 * `transaction(fn)` hands `fn` a transaction object; a nested one (a savepoint) is another object
 * (Drizzle), or with `same` the same one (TypeORM's EntityManager).
 */
class Tx {
  constructor(
    readonly conn: PgQueryable,
    private readonly same = false,
  ) {}
  transaction<R>(fn: (tx: Tx) => Promise<R>): Promise<R> {
    return fn(this.same ? this : new Tx(this.conn));
  }
}

function setUp(same = false) {
  const sent: string[] = [];
  const pool = { ...connection('pool', sent), connect: async () => undefined, idleCount: 0 } as unknown as PgPool;
  const current = new AsyncLocalStorage<Tx>();
  const seam: OrmTransactionSeam = { orm: 'Fake', poolOf: () => pool, connectionOf: (tx) => (tx as Tx).conn };
  const db = {
    transaction: <R>(fn: (tx: Tx) => Promise<R>): Promise<R> => fn(new Tx(connection('tx', sent), same)),
  };
  // As nestjs-cls's adapters do: the transaction object is current while the callback runs.
  const run = <R>(target: { transaction: Tx['transaction'] }, fn: () => Promise<R>) =>
    target.transaction((tx) => current.run(tx, fn));
  const joined = joinOrmTransactions(seam, db, () => current.getStore());
  return { sent, pool, db, run, current, joined };
}

describe('joinOrmTransactions', () => {
  it("sends a part's statements on the transaction's connection inside, on the pool outside", async () => {
    const { sent, pool, db, run, joined } = setUp();
    try {
      await run(db, () => queryableFor(pool, 'a part').query('inside'));
      await queryableFor(pool, 'a part').query('outside');
      expect(sent).toEqual(['tx:inside', 'pool:outside']);
    } finally {
      joined.detach();
    }
  });

  it.each([
    ['another object', false],
    ['the same object', true],
  ])(
    'runs what waits for the commit after it, never after a rollback or a failed savepoint (on %s)',
    async (_, same) => {
      const { pool, db, run, current, joined } = setUp(same);
      const ran: string[] = [];
      try {
        const afterCommit = () => activeTransactionFor(pool)!.afterCommit!;
        await run(db, async () => {
          afterCommit()(() => ran.push('committed'));
          const inner = current.getStore()!;
          await run(inner, async () => {
            afterCommit()(() => ran.push('savepoint kept'));
          });
          await run(inner, async () => {
            afterCommit()(() => ran.push('savepoint undone'));
            throw new Error('nested failed');
          }).catch(() => undefined);
          expect(ran).toEqual([]);
        });
        expect(ran).toEqual(['committed', 'savepoint kept']);
        await expect(
          run(db, async () => {
            afterCommit()(() => ran.push('rolled back'));
            throw new Error('failed');
          }),
        ).rejects.toThrow('failed');
        expect(ran).toEqual(['committed', 'savepoint kept']);
      } finally {
        joined.detach();
      }
    },
  );

  it('refuses a statement after the end, on a client kept and on work left running', async () => {
    const { sent, pool, db, run, joined } = setUp();
    try {
      let kept: PgQueryable | undefined;
      let late: Promise<unknown> | undefined;
      let go!: () => void;
      const gate = new Promise<void>((resolve) => (go = resolve));
      await run(db, async () => {
        kept = queryableFor(pool, 'a part');
        late = gate.then(() => queryableFor(pool, 'a part').query('late'));
      });
      go();
      await expect(late).rejects.toBeInstanceOf(PgTransactionEndedError);
      await expect(kept!.query('kept')).rejects.toBeInstanceOf(PgTransactionEndedError);
      expect(sent).toEqual([]);
    } finally {
      joined.detach();
    }
  });

  it('stops joining once detached', async () => {
    const { sent, pool, db, run, joined } = setUp();
    joined.detach();
    await run(db, () => queryableFor(pool, 'a part').query('inside'));
    expect(sent).toEqual(['pool:inside']);
  });
});
