import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { PostgresPrepareKeyFactory } from '@ddd-kit/prepare-key';
import type { UniqueKeyOwner } from '@ddd-kit/repository';
import pg from 'pg';
import { postgresSchema } from '../support/servers.js';
import { Member, MemberPostgresRepository } from './support/member.aggregate.js';

// Reservations and aggregates in one PostgreSQL database, on one pool: every write and its
// keys commit or roll back together — no compensation, no window for a crash.
describe('@UniqueKey with PostgresPrepareKeyFactory and PostgresRepository on one pool: one transaction', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    schema = await postgresSchema('uk_one_tx');
    pool = new pg.Pool({ connectionString: schema.url, max: 6 });
  });
  afterAll(async () => {
    await pool.end();
    await schema.drop();
  });

  function setup(table: string) {
    const keys = new PostgresPrepareKeyFactory(pool, { table: `${table}_keys`, sweepIntervalMs: 0 });
    const reservations = { handle: keys.create<UniqueKeyOwner>('handle'), email: keys.create<UniqueKeyOwner>('email') };
    return { reservations, options: { pool, table, aggregate: Member, uniqueKeys: reservations } };
  }

  it('a write that fails after its keys were reserved takes them back with the rollback, not by releasing them', async () => {
    const { reservations, options } = setup('tx_fail');
    class Failing extends MemberPostgresRepository {
      protected override async doInsert(member: Member): Promise<void> {
        await super.doInsert(member);
        throw new Error('failed after writing, inside the transaction');
      }
    }
    const repository = new Failing(options);
    // Releasing is made impossible: only the transaction can undo the reservation.
    const rollback = jest.spyOn(reservations.handle, 'rollback').mockRejectedValue(new Error('no release possible'));
    await expect(repository.insert(new Member('m1', 'ann'))).rejects.toThrow('inside the transaction');
    rollback.mockRestore();
    expect(await reservations.handle.get('ann')).toBeUndefined();
    expect(await repository.findById('m1')).toBeNull();
  });

  it("a rename commits the new reservation, the row and the old reservation's release together", async () => {
    const { reservations, options } = setup('tx_rename');
    const repository = new MemberPostgresRepository(options);
    await repository.insert(new Member('m1', 'ann'));
    const member = (await repository.findById('m1'))!;
    member.handle = 'anne';
    // Watch the statements of the rename: one BEGIN … COMMIT holds all three.
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    const spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text;
      if (text) sent.push(text.split(/\s+/).slice(0, 3).join(' '));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as never);
    try {
      await repository.update(member);
    } finally {
      spy.mockRestore();
    }
    const begin = sent.indexOf('BEGIN');
    const commit = sent.lastIndexOf('COMMIT');
    expect(begin).toBeGreaterThanOrEqual(0);
    const inside = sent.slice(begin + 1, commit);
    expect(inside.some((s) => s.startsWith('INSERT INTO "tx_rename_keys"'))).toBe(true); // reserve 'anne'
    expect(inside.some((s) => s.startsWith('UPDATE "tx_rename"'))).toBe(true); // the row
    expect(inside.filter((s) => s.startsWith('UPDATE "tx_rename_keys"')).length).toBeGreaterThanOrEqual(1); // release 'ann'
    expect(sent.slice(commit + 1).some((s) => s.includes('tx_rename_keys'))).toBe(false);
    expect(await reservations.handle.get('ann')).toBeUndefined();
    expect(await reservations.handle.get('anne')).toMatchObject({ id: 'm1' });
  });

  it('two transactions racing for one value: exactly one commits holding it; the other is a violation, and its row is not written', async () => {
    const { reservations, options } = setup('tx_race');
    const repository = new MemberPostgresRepository(options);
    for (let round = 0; round < 10; round++) {
      const outcomes = await Promise.allSettled([
        repository.insert(new Member(`a${round}`, `h${round}`)),
        repository.insert(new Member(`b${round}`, `h${round}`)),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const holder = await reservations.handle.get(`h${round}`);
      expect(await repository.findById(String(holder!.id))).not.toBeNull();
      const loser = holder!.id === `a${round}` ? `b${round}` : `a${round}`;
      expect(await repository.findById(loser)).toBeNull();
    }
  });
});
