// reconcileUniqueKeys reads a page at a time and looks each page up in one batch; what one at a
// time would have found must not change: a value twice in a page, a batch that fails.
import { describe, expect, it } from '@jest/globals';
import { MemoryPrepareKeyFactory, type PrepareKey } from '@ddd-kit/prepare-key';
import { reconcileUniqueKeys, type UniqueKeyOwner } from '@ddd-kit/repository';
import { Member, MemberInMemoryRepository } from './support/member.aggregate.js';

function fixture() {
  const factory = new MemoryPrepareKeyFactory();
  const handles: PrepareKey<UniqueKeyOwner> = factory.create('handle');
  const repository = new MemberInMemoryRepository({
    aggregate: Member,
    uniqueKeys: { handle: handles, email: factory.create('email') },
  } as never);
  return { handles, repository };
}

describe('reconcileUniqueKeys, a page at a time', () => {
  it('restores the first of two members sharing an unreserved value in one page, and reports the second', async () => {
    const { handles, repository } = fixture();
    await repository.insert(new Member('m1', 'ann'));
    await handles.rollback('ann');
    await repository.insert(new Member('m2', 'ann'));
    await handles.rollback('ann');

    const report = await reconcileUniqueKeys(repository, { graceMs: 0, pageSize: 10 });
    expect(report).toEqual({
      scanned: 0,
      live: 0,
      spared: 0,
      released: 0,
      restored: 1,
      heldByOther: [{ name: 'handle', key: 'ann', id: 'm2', holder: { aggregate: 'member', id: 'm1' } }],
      shared: [{ name: 'handle', key: 'ann', ids: ['m1', 'm2'] }],
      failed: 0,
    });
    expect(await handles.get('ann')).toMatchObject({ id: 'm1' });
  });

  it('asks a failed batch again one by one: only the owner whose load fails counts as failed', async () => {
    const { repository } = fixture();
    for (const id of ['m1', 'm2', 'm3']) await repository.insert(new Member(id, `h-${id}`));
    const failure = new Error('m2 cannot be read');
    const errors: unknown[] = [];
    const flaky = {
      uniqueKeyReserver: () => repository.uniqueKeyReserver(),
      aggregates: (options: { pageSize?: number }) => repository.aggregates(options),
      findByIds: async () => {
        throw new Error('the batch failed');
      },
      findById: async (id: string) => {
        if (id === 'm2') throw failure;
        return repository.findById(id);
      },
    };
    const report = await reconcileUniqueKeys(flaky, { graceMs: 0, onError: (error) => errors.push(error) });
    expect(report).toMatchObject({ scanned: 3, live: 2, released: 0, restored: 0, failed: 1 });
    expect(errors).toEqual([failure]);
  });

  it('lists the next page (and loads its owners) while the current one is looked up and repaired', async () => {
    const log: string[] = [];
    const later = () => new Promise((resolve) => setImmediate(resolve));
    const factory = new MemoryPrepareKeyFactory();
    const store = factory.create<UniqueKeyOwner>('handle');
    const handles = Object.assign(Object.create(store) as PrepareKey<UniqueKeyOwner>, {
      records: async function* (options?: { pageSize?: number }) {
        for await (const record of store.records(options)) {
          log.push(`reservation ${record.key}`);
          yield record;
        }
      },
      rollback: async (key: string, value: UniqueKeyOwner) => {
        await later();
        log.push(`released ${key}`);
        return store.rollback(key, value);
      },
      getValues: async (keys: readonly string[]) => {
        await later();
        log.push(`looked up ${keys.join()}`);
        return store.getValues(keys);
      },
    });
    const repository = new MemberInMemoryRepository({
      aggregate: Member,
      uniqueKeys: { handle: handles, email: factory.create('email') },
    } as never);
    for (const id of ['m1', 'm2']) await repository.insert(new Member(id, `h-${id}`));
    for (const ghost of ['g1', 'g2']) await store.prepare(ghost, { aggregate: 'member', id: ghost, at: 1 });
    const listed = {
      uniqueKeyReserver: () => repository.uniqueKeyReserver(),
      aggregates: async function* (options: { pageSize?: number }) {
        for await (const member of repository.aggregates(options)) {
          log.push(`member ${member.id}`);
          yield member;
        }
      },
      findByIds: (ids: readonly string[]) => repository.findByIds(ids),
      findById: (id: string) => repository.findById(id),
    };

    const report = await reconcileUniqueKeys(listed, { graceMs: 0, pageSize: 1 });
    expect(report).toMatchObject({ scanned: 4, live: 2, released: 2, restored: 0, failed: 0 });
    const before = (first: string, second: string) => expect(log.indexOf(first)).toBeLessThan(log.indexOf(second));
    const [first, second] = log.filter((entry) => entry.startsWith('released')).map((entry) => entry.slice(9));
    before(`reservation ${second}`, `released ${first}`);
    before('member m2', 'looked up h-m1');
  });

  it('judges graceMs by the clock it is given', async () => {
    const { handles, repository } = fixture();
    const at = 1_000_000;
    await handles.prepare('ghost', { aggregate: 'member', id: 'nobody', at });
    const young = await reconcileUniqueKeys(repository, { graceMs: 60_000, now: () => at + 59_999 });
    expect(young).toMatchObject({ spared: 1, released: 0 });
    const old = await reconcileUniqueKeys(repository, { graceMs: 60_000, now: () => at + 60_000 });
    expect(old).toMatchObject({ spared: 0, released: 1 });
  });

  it('refuses a concurrency that is not a positive integer, before reading anything', async () => {
    const { repository } = fixture();
    await expect(reconcileUniqueKeys(repository, { concurrency: 0 })).rejects.toThrow(/concurrency/);
  });
});
