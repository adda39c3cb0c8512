// The unique-key cases every PrepareKey backend × repository backend must pass (SPEC §3
// "Unique keys declared on the aggregate", the step order and fault rules of §1 and §4).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PrepareKeyArgumentError, type PrepareKey } from '@ddd-kit/prepare-key';
import type { ArmedFault, PrepareKeyFault } from '@ddd-kit/prepare-key/testing';
import {
  OptimisticLockError,
  reconcileUniqueKeys,
  UniqueKeyViolationError,
  type AbstractRepository,
  type RepositoryOptions,
  type UniqueKeyOwner,
} from '@ddd-kit/repository';
import { waitFor } from '../../support/wait.js';
import { Member, type MemberInMemoryRepository } from './member.aggregate.js';

export type Reservations = Record<'handle' | 'email', PrepareKey<UniqueKeyOwner>>;
export type MemberRepository = AbstractRepository<string, Member>;
export type MemberRepositoryClass = new (
  options?: RepositoryOptions<Member> & Record<string, unknown>,
) => MemberRepository;

export interface UniqueKeyHarness {
  /** The backend's Member repository class (cases subclass it to inject failures). */
  Repository: MemberRepositoryClass;
  /** Constructor options for a repository on a fresh, empty store. */
  options(): Record<string, unknown>;
  /** PrepareKeys 'handle' and 'email' on a fresh key space of the PrepareKey backend. */
  reservations(): Reservations;
  /**
   * A fresh key space of its own for one fault case (when the backend is reached over a
   * network), reached directly (`clean`) and through a fault injector (`faulty`); `arm(nth)`
   * arms the case's fault on the nth store command about 'handle'.
   */
  faults?: (fault: PrepareKeyFault) => Promise<{
    clean: Reservations;
    faulty: Reservations;
    arm(nth: number): ArmedFault;
    close(): Promise<void>;
  }>;
  close(): Promise<void>;
}

export function describeUniqueKeyContract(
  label: string,
  setup: () => Promise<UniqueKeyHarness>,
  options: { faults?: boolean } = {},
): void {
  describe(`unique keys: ${label}`, () => {
    let harness: UniqueKeyHarness;

    beforeAll(async () => {
      harness = await setup();
    });
    afterAll(async () => {
      await harness?.close();
    });

    function fixture(Repository: MemberRepositoryClass = harness.Repository, reservations = harness.reservations()) {
      const repository = new Repository({ ...harness.options(), aggregate: Member, uniqueKeys: reservations });
      return { repository, reservations };
    }

    async function holder(
      reservations: Reservations,
      name: 'handle' | 'email',
      key: string,
    ): Promise<string | undefined> {
      const value = await reservations[name].get(key);
      return value === undefined ? undefined : String(value.id);
    }

    /** SPEC §4's invariants over `ids`: no shared value, every value reserved by its holder; with `all`, every reservation held by its owner. */
    async function breaches(f: ReturnType<typeof fixture>, ids: string[], all = false): Promise<string[]> {
      const found: string[] = [];
      const byValue = new Map<string, string>();
      for (const id of ids) {
        const member = await f.repository.findById(id);
        if (member === null) continue;
        for (const [name, key] of [
          ['handle', member.handle],
          ['email', member.email],
        ] as const) {
          if (key === null) continue;
          const other = byValue.get(`${name}:${key}`);
          if (other !== undefined) found.push(`${id} and ${other} share ${name} '${key}'`);
          byValue.set(`${name}:${key}`, id);
          const reservedBy = await holder(f.reservations, name, key);
          if (reservedBy !== id) found.push(`${id}'s ${name} '${key}' is reserved by ${reservedBy ?? 'nobody'}`);
        }
      }
      if (all) {
        for (const name of ['handle', 'email'] as const) {
          for await (const record of f.reservations[name].records()) {
            if (record.value.isExpired() || record.value.value.aggregate !== 'member') continue;
            const member = await f.repository.findById(String(record.value.value.id));
            const value = member === null ? undefined : name === 'handle' ? member.handle : member.email;
            if (value !== record.key)
              found.push(
                `${name} '${record.key}' is reserved by ${record.value.value.id}, which ${member ? `has '${value}'` : 'does not exist'}`,
              );
          }
        }
      }
      return found;
    }

    it('insert reserves every key for { aggregate, id, at }, then writes', async () => {
      const f = fixture();
      const before = Date.now();
      await f.repository.insert(new Member('m1', 'ann', 'ann@x.io'));
      const reservation = await f.reservations.handle.get('ann');
      expect(reservation).toEqual({ aggregate: 'member', id: 'm1', at: expect.any(Number) });
      expect(reservation!.at).toBeGreaterThanOrEqual(before);
      expect(await holder(f.reservations, 'email', 'ann@x.io')).toBe('m1');
      expect(await f.repository.findById('m1')).toMatchObject({ handle: 'ann', email: 'ann@x.io' });
    });

    it('a null value reserves nothing, and a value set later is reserved by the update', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann'));
      const member = (await f.repository.findById('m1'))!;
      member.email = 'ann@x.io';
      await f.repository.update(member);
      expect(await holder(f.reservations, 'email', 'ann@x.io')).toBe('m1');
      member.email = null;
      await f.repository.update(member);
      expect(await f.reservations.email.get('ann@x.io')).toBeUndefined();
    });

    it('a duplicate insert: UniqueKeyViolationError { name, key }, nothing written, nothing it took left held', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann', 'ann@x.io'));
      // 'email' is reserved first (keys are taken in name order), then 'handle' is found taken.
      const attempt = f.repository.insert(new Member('m2', 'ann', 'other@x.io'));
      await expect(attempt).rejects.toBeInstanceOf(UniqueKeyViolationError);
      await expect(attempt).rejects.toMatchObject({ name: 'handle', key: 'ann' });
      expect(await f.repository.findById('m2')).toBeNull();
      expect(await f.reservations.email.get('other@x.io')).toBeUndefined();
      expect(await holder(f.reservations, 'handle', 'ann')).toBe('m1');
      expect(await breaches(f, ['m1', 'm2'], true)).toEqual([]);
    });

    it('a value no store can hold (U+0000, a lone surrogate): the argument error, nothing written, nothing held', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann', 'ann@x.io'));
      for (const bad of ['A\u0000B', 'a\uD800']) {
        // 'email' is taken first (name order), then the handle is refused: the email is given back.
        await expect(f.repository.insert(new Member('m2', bad, 'b@x.io'))).rejects.toBeInstanceOf(
          PrepareKeyArgumentError,
        );
        expect(await f.repository.findById('m2')).toBeNull();
        expect(await f.reservations.email.get('b@x.io')).toBeUndefined();
        const member = (await f.repository.findById('m1'))!;
        member.handle = bad;
        await expect(f.repository.update(member)).rejects.toBeInstanceOf(PrepareKeyArgumentError);
        expect(await f.repository.findById('m1')).toMatchObject({ handle: 'ann', version: 1 });
      }
      expect(await breaches(f, ['m1', 'm2'], true)).toEqual([]);
    });

    it('a retried insert of the same aggregate is not a conflict on its keys (the duplicate id is what fails), and keeps them', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann', 'ann@x.io'));
      await expect(f.repository.insert(new Member('m1', 'ann', 'ann@x.io'))).rejects.toThrow(/m1/);
      expect(await holder(f.reservations, 'handle', 'ann')).toBe('m1');
      expect(await holder(f.reservations, 'email', 'ann@x.io')).toBe('m1');
      expect(await breaches(f, ['m1'], true)).toEqual([]);
    });

    it('a retried insert whose first attempt reserved but never wrote goes through', async () => {
      const f = fixture();
      // The first attempt took the key and died before its write (a crash between the steps).
      await f.reservations.handle.prepare('ann', { aggregate: 'member', id: 'm1', at: Date.now() - 1_000 });
      await f.repository.insert(new Member('m1', 'ann'));
      expect(await holder(f.reservations, 'handle', 'ann')).toBe('m1');
      expect(await breaches(f, ['m1'], true)).toEqual([]);
    });

    it("a retry that finds its earlier attempt's reservation takes it over, so a failure then releases it too", async () => {
      const f = fixture();
      // An earlier attempt reserved m1's email and died before its write; 'ann' belongs to m2.
      await f.reservations.email.prepare('ann@x.io', { aggregate: 'member', id: 'm1', at: Date.now() - 1_000 });
      await f.repository.insert(new Member('m2', 'ann'));
      await expect(f.repository.insert(new Member('m1', 'ann', 'ann@x.io'))).rejects.toMatchObject({
        name: 'handle',
        key: 'ann',
      });
      expect(await f.reservations.email.get('ann@x.io')).toBeUndefined();
      expect(await breaches(f, ['m1', 'm2'], true)).toEqual([]);
    });

    it('rename to a taken value: UniqueKeyViolationError, nothing written, both values stay with their holders', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann'));
      await f.repository.insert(new Member('m2', 'bob'));
      const ann = (await f.repository.findById('m1'))!;
      ann.handle = 'bob';
      await expect(f.repository.update(ann)).rejects.toMatchObject({ name: 'handle', key: 'bob' });
      expect((await f.repository.findById('m1'))!.handle).toBe('ann');
      expect(await holder(f.reservations, 'handle', 'ann')).toBe('m1');
      expect(await holder(f.reservations, 'handle', 'bob')).toBe('m2');
    });

    it('rename back and forth: the new value reserved, the old one released, each time', async () => {
      const f = fixture();
      const member = new Member('m1', 'ann');
      await f.repository.insert(member);
      for (const [from, to] of [
        ['ann', 'anne'],
        ['anne', 'ann'],
        ['ann', 'anne'],
      ]) {
        member.handle = to;
        await f.repository.update(member);
        expect(await holder(f.reservations, 'handle', to)).toBe('m1');
        expect(await f.reservations.handle.get(from)).toBeUndefined();
      }
      expect(await breaches(f, ['m1'], true)).toEqual([]);
    });

    it('a stale update reserves nothing and releases nothing', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann'));
      const [first, stale] = [(await f.repository.findById('m1'))!, (await f.repository.findById('m1'))!];
      first.handle = 'anne';
      await f.repository.update(first);
      stale.handle = 'annie';
      await expect(f.repository.update(stale)).rejects.toBeInstanceOf(OptimisticLockError);
      expect(await f.reservations.handle.get('annie')).toBeUndefined();
      expect(await holder(f.reservations, 'handle', 'anne')).toBe('m1');
      expect(await breaches(f, ['m1'], true)).toEqual([]);
    });

    it('two loaded copies renaming one aggregate to one value: one wins, the value stays reserved whichever lost', async () => {
      for (let round = 0; round < 10; round++) {
        const f = fixture();
        await f.repository.insert(new Member('m1', 'ann'));
        const copies = [(await f.repository.findById('m1'))!, (await f.repository.findById('m1'))!];
        for (const copy of copies) copy.handle = 'anne';
        const outcomes = await Promise.allSettled(copies.map((copy) => f.repository.update(copy)));
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        expect(await breaches(f, ['m1'], true)).toEqual([]);
      }
    });

    it('concurrent renames of two aggregates swapping values: no value ends shared or unreserved', async () => {
      for (let round = 0; round < 10; round++) {
        const f = fixture();
        await f.repository.insert(new Member('m1', 'ann'));
        await f.repository.insert(new Member('m2', 'bob'));
        const [a, b] = [(await f.repository.findById('m1'))!, (await f.repository.findById('m2'))!];
        a.handle = 'bob';
        b.handle = 'ann';
        const outcomes = await Promise.allSettled([f.repository.update(a), f.repository.update(b)]);
        for (const outcome of outcomes)
          if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(UniqueKeyViolationError);
        expect(await breaches(f, ['m1', 'm2'], true)).toEqual([]);
      }
    });

    it('concurrent renames of several aggregates to one free value: exactly one gets it', async () => {
      const f = fixture();
      const ids = ['m1', 'm2', 'm3', 'm4', 'm5'];
      for (const id of ids) await f.repository.insert(new Member(id, `h-${id}`));
      const loaded = await Promise.all(ids.map(async (id) => (await f.repository.findById(id))!));
      for (const member of loaded) member.handle = 'wanted';
      const outcomes = await Promise.allSettled(loaded.map((member) => f.repository.update(member)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(await breaches(f, ids, true)).toEqual([]);
    });

    it('remove releases every key once the aggregate is gone', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann', 'ann@x.io'));
      await f.repository.remove((await f.repository.findById('m1'))!);
      expect(await f.reservations.handle.get('ann')).toBeUndefined();
      expect(await f.reservations.email.get('ann@x.io')).toBeUndefined();
      // And a new aggregate may take the values.
      await f.repository.insert(new Member('m2', 'ann', 'ann@x.io'));
      expect(await breaches(f, ['m1', 'm2'], true)).toEqual([]);
    });

    it('a stale remove releases nothing', async () => {
      const f = fixture();
      await f.repository.insert(new Member('m1', 'ann'));
      const [renamed, stale] = [(await f.repository.findById('m1'))!, (await f.repository.findById('m1'))!];
      renamed.handle = 'anne';
      await f.repository.update(renamed);
      await expect(f.repository.remove(stale)).rejects.toBeInstanceOf(OptimisticLockError);
      expect(await holder(f.reservations, 'handle', 'anne')).toBe('m1');
      expect(await breaches(f, ['m1'], true)).toEqual([]);
    });

    it('a write that fails before reaching the store leaves nothing it reserved held', async () => {
      // Any backend's class, typed as a concrete one for the subclass to override its steps.
      const Base = harness.Repository as unknown as typeof MemberInMemoryRepository;
      class Failing extends Base {
        refuse = false;
        protected override doInsert(member: Member): Promise<void> {
          return this.refuse ? Promise.reject(new Error('the store refused the write')) : super.doInsert(member);
        }
        protected override doUpdate(member: Member): Promise<void> {
          return this.refuse ? Promise.reject(new Error('the store refused the write')) : super.doUpdate(member);
        }
      }
      const reservations = harness.reservations();
      const repository = new Failing({ ...harness.options(), aggregate: Member, uniqueKeys: reservations } as never);
      await repository.insert(new Member('m2', 'bob'));
      repository.refuse = true;
      await expect(repository.insert(new Member('m1', 'ann', 'ann@x.io'))).rejects.toThrow('refused');
      expect(await reservations.handle.get('ann')).toBeUndefined();
      expect(await reservations.email.get('ann@x.io')).toBeUndefined();
      // An update that fails: the new value is released, the old one kept.
      const bob = (await repository.findById('m2'))!;
      bob.handle = 'robert';
      await expect(repository.update(bob)).rejects.toThrow('refused');
      expect(await reservations.handle.get('robert')).toBeUndefined();
      expect(await holder(reservations, 'handle', 'bob')).toBe('m2');
    });

    it('a write that fails after reaching the store (a lost reply): the reservations follow what the store holds', async () => {
      // Any backend's class, typed as a concrete one for the subclass to override its steps.
      const Base = harness.Repository as unknown as typeof MemberInMemoryRepository;
      class LostReply extends Base {
        lose = true;
        protected override async doInsert(member: Member): Promise<void> {
          await super.doInsert(member);
          if (this.lose) throw new Error('connection reset after the write reached the store');
        }
        protected override async doUpdate(member: Member): Promise<void> {
          await super.doUpdate(member);
          if (this.lose) throw new Error('connection reset after the write reached the store');
        }
      }
      const reservations = harness.reservations();
      const lossy = new LostReply({ ...harness.options(), aggregate: Member, uniqueKeys: reservations } as never);
      const f = { repository: lossy as unknown as MemberRepository, reservations };
      await expect(lossy.insert(new Member('m1', 'ann'))).rejects.toThrow('reached the store');
      // An autocommitting store kept the write: the name stays held. A transactional one rolled the
      // whole unit back: the name was released. Never a stored member without its name.
      const inserted = await lossy.findById('m1');
      expect(await holder(reservations, 'handle', 'ann')).toBe(inserted === null ? undefined : 'm1');
      expect(await breaches(f, ['m1'])).toEqual([]);
      if (inserted === null) {
        lossy.lose = false;
        await lossy.insert(new Member('m1', 'ann'));
        lossy.lose = true;
      }
      const ann = (await lossy.findById('m1'))!;
      ann.handle = 'anne';
      await expect(lossy.update(ann)).rejects.toThrow('reached the store');
      const stored = (await lossy.findById('m1'))!;
      expect(await holder(reservations, 'handle', stored.handle)).toBe('m1');
      expect(await breaches(f, ['m1'])).toEqual([]);
      // After an update that happened both names may stay held (the recoverable state): reconciliation ends that.
      await reconcileUniqueKeys(lossy as unknown as MemberRepository, { graceMs: 0 });
      expect(await breaches(f, ['m1'], true)).toEqual([]);
    });

    describe('reconcileUniqueKeys', () => {
      it('releases reservations whose owner is gone or holds another value, restores missing ones, reports shared values', async () => {
        const f = fixture();
        await f.repository.insert(new Member('m1', 'ann'));
        await f.repository.insert(new Member('m2', 'bob'));
        await f.repository.insert(new Member('m3', 'cid'));
        const old = Date.now() - 60 * 60_000;
        // An orphan (its member was never written), a stale one (m1 has 'ann', not 'annie').
        await f.reservations.handle.prepare('ghost', { aggregate: 'member', id: 'nobody', at: old });
        await f.reservations.handle.prepare('annie', { aggregate: 'member', id: 'm1', at: old });
        // Another aggregate type's reservation: none of this repository's business.
        await f.reservations.handle.prepare('team', { aggregate: 'team', id: 't1', at: old });
        // m2's reservation lost (a backend restart, a hand-made delete).
        await f.reservations.handle.rollback('bob');
        // A young orphan: a write may still be in flight.
        await f.reservations.handle.prepare('young', { aggregate: 'member', id: 'm9', at: Date.now() });

        const dry = await reconcileUniqueKeys(f.repository, { dryRun: true });
        expect(dry).toMatchObject({ released: 2, restored: 1, spared: 1 });
        expect(await f.reservations.handle.get('ghost')).toBeDefined();
        expect(await f.reservations.handle.get('bob')).toBeUndefined();

        const report = await reconcileUniqueKeys(f.repository);
        expect(report).toMatchObject({ released: 2, restored: 1, spared: 1, failed: 0, shared: [], heldByOther: [] });
        expect(await f.reservations.handle.get('ghost')).toBeUndefined();
        expect(await f.reservations.handle.get('annie')).toBeUndefined();
        expect(await holder(f.reservations, 'handle', 'bob')).toBe('m2');
        expect(await holder(f.reservations, 'handle', 'team')).toBe('t1');
        expect(await holder(f.reservations, 'handle', 'young')).toBe('m9');
        expect((await reconcileUniqueKeys(f.repository, { graceMs: 0 })).released).toBe(1); // now the young one too
        expect(await breaches(f, ['m1', 'm2', 'm3'], true)).toEqual([]);
      });

      it('reports aggregates that share a value, and values reserved by another aggregate, changing neither', async () => {
        const f = fixture();
        await f.repository.insert(new Member('m1', 'ann'));
        // m1's reservation is lost (a hand-made delete), and m2 takes the value.
        await f.reservations.handle.rollback('ann');
        await f.repository.insert(new Member('m2', 'ann'));
        const report = await reconcileUniqueKeys(f.repository, { graceMs: 0 });
        expect(report.shared).toEqual([{ name: 'handle', key: 'ann', ids: ['m1', 'm2'] }]);
        expect(report.heldByOther).toEqual([
          { name: 'handle', key: 'ann', id: 'm1', holder: { aggregate: 'member', id: 'm2' } },
        ]);
        expect(report.restored).toBe(0);
        expect(await holder(f.reservations, 'handle', 'ann')).toBe('m2');
      });
    });

    if (options.faults) {
      describe('under faults between the repository and its reservations', () => {
        // The reservation commands of each write, in order: insert prepares the new value;
        // a rename prepares the new value, then reads and releases the old one; remove reads and
        // releases. Each fault hits each of them in turn. The cases run at once, each on a key
        // space and a proxy of its own; a backend without a network has none.
        const STEPS: Array<{ op: 'insert' | 'rename' | 'remove'; commands: number }> = [
          { op: 'insert', commands: 1 },
          { op: 'rename', commands: 3 },
          { op: 'remove', commands: 2 },
        ];
        const FAULTS: PrepareKeyFault[] = ['lost-reply-resent', 'lost-reply', 'timeout'];
        for (const fault of FAULTS) {
          for (const { op, commands } of STEPS) {
            it.concurrent(
              `${fault} on each reservation command of ${op}: the write answers or errs, the invariants hold (after reconciliation too)`,
              async () => {
                const opened = await harness.faults!(fault);
                try {
                  const repository = new harness.Repository({
                    ...harness.options(),
                    aggregate: Member,
                    uniqueKeys: opened.faulty,
                  });
                  const check = { repository, reservations: opened.clean };
                  const ids: string[] = [];
                  for (let nth = 1; nth <= commands; nth++) {
                    const id = `${op}-${nth}`;
                    ids.push(id);
                    if (op !== 'insert') await repository.insert(new Member(id, `h-${id}`));
                    const member = op === 'insert' ? new Member(id, `h-${id}`) : (await repository.findById(id))!;
                    if (op === 'rename') member.handle = `h-${id}-renamed`;
                    const armed = opened.arm(nth);
                    const outcome = await (
                      op === 'insert'
                        ? repository.insert(member)
                        : op === 'rename'
                          ? repository.update(member)
                          : repository.remove(member)
                    ).then(
                      () => 'done',
                      (error: unknown) => error,
                    );
                    armed.cancel();
                    await waitFor(`the ${fault} fault to meet command ${nth} of ${op}`, armed.fired);
                    // A resent command gets its answer: the write goes through.
                    if (fault === 'lost-reply-resent') expect(outcome).toBe('done');
                    expect(await breaches(check, ids)).toEqual([]);
                  }
                  // Reconciled through clients without the faults' short timeout: an unfaulted
                  // command may outlast it on a busy machine.
                  repository.configure({ uniqueKeys: opened.clean });
                  await reconcileUniqueKeys(repository, { graceMs: 0 });
                  expect(await breaches(check, ids, true)).toEqual([]);
                } finally {
                  await opened.close();
                }
              },
            );
          }
        }
      });
    }
  });
}
