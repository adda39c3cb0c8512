import { describe, expect, it } from '@jest/globals';
import { AggregateRoot } from '../aggregate/aggregate-root.js';
import { InMemoryRepository } from '../backends/memory/in-memory.repository.js';
import { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { InMemoryReadReplica } from './in-memory-read-replica.js';
import { ReadReplicaReconciler } from './read-replica.reconciler.js';
import { classifyReplicaEntry, ReplicaEntryStatus } from './replica-entry-status.js';

class Doc extends AggregateRoot<string> {
  constructor(
    id: string,
    public text: string,
  ) {
    super(id);
  }
}

describe('classifyReplicaEntry', () => {
  it('OK when equal, ORPHAN when the write model has none, STALE when behind or ahead', () => {
    expect(classifyReplicaEntry(3, 3)).toBe(ReplicaEntryStatus.OK);
    expect(classifyReplicaEntry(3, -1)).toBe(ReplicaEntryStatus.ORPHAN);
    expect(classifyReplicaEntry(2, 3)).toBe(ReplicaEntryStatus.STALE);
    expect(classifyReplicaEntry(5, 1)).toBe(ReplicaEntryStatus.STALE);
  });
});

describe('InMemoryReadReplica', () => {
  it('pages through every entry in id order (numbers first), unaffected by purges during the sweep', async () => {
    const replica = new InMemoryReadReplica<string | number>();
    for (const id of ['b', 2, 'a', 10, 'c', 'd', 1]) await replica.upsert(id, 1, {});
    const seen: Array<string | number> = [];
    let cursor: string | null = null;
    do {
      const page = await replica.listVersions({ cursor, limit: 2 });
      for (const entry of page.entries) {
        seen.push(entry.id);
        await replica.purge(entry.id);
      }
      cursor = page.cursor;
    } while (cursor !== null);
    expect(seen).toEqual([1, 2, 10, 'a', 'b', 'c', 'd']);
    expect(replica.size).toBe(0);
  });

  it('apply keeps the newest UPSERT whatever order events arrive in, and PURGE drops', () => {
    const replica = new InMemoryReadReplica<string, { v: number }>();
    replica.apply([DataSyncEvent.upsert('Doc', 'x', 3, { v: 3 })]);
    replica.apply([DataSyncEvent.upsert('Doc', 'x', 2, { v: 2 })]);
    expect(replica.get('x')).toEqual({ id: 'x', version: 3, snapshot: { v: 3 } });
    replica.apply([DataSyncEvent.purge('Doc', 'x', 4)]);
    expect(replica.get('x')).toBeUndefined();
  });

  it('apply is idempotent by version: a repeated or older event changes nothing, a stale UPSERT after a PURGE included', () => {
    const replica = new InMemoryReadReplica<string, { v: number }>();
    const v1 = DataSyncEvent.upsert('Doc', 'x', 1, { v: 1 });
    const v2 = DataSyncEvent.upsert('Doc', 'x', 2, { v: 2 });
    replica.apply([v1]);
    replica.apply([v2]);
    replica.apply([v2]); // delivered twice
    replica.apply([v1]); // a replayed dead letter, older than what is held
    expect(replica.get('x')).toEqual({ id: 'x', version: 2, snapshot: { v: 2 } });
    // An older PURGE does not delete a newer entry.
    replica.apply([DataSyncEvent.purge('Doc', 'x', 2)]);
    expect(replica.get('x')).toEqual({ id: 'x', version: 2, snapshot: { v: 2 } });
    replica.apply([DataSyncEvent.purge('Doc', 'x', 3)]);
    expect(replica.get('x')).toBeUndefined();
    expect(replica.tombstone('x')).toBe(3);
    // The tombstone keeps a late UPSERT (v2 again, or v1 replayed) from bringing it back.
    replica.apply([v2]);
    replica.apply([v1]);
    expect(replica.get('x')).toBeUndefined();
    expect(replica.size).toBe(0);
    // A newer UPSERT does.
    replica.apply([DataSyncEvent.upsert('Doc', 'x', 4, { v: 4 })]);
    expect(replica.get('x')).toEqual({ id: 'x', version: 4, snapshot: { v: 4 } });
    expect(replica.tombstone('x')).toBeUndefined();
  });
});

describe('ReadReplicaReconciler', () => {
  it('counts an entry whose repair fails, leaves it, and repairs the rest', async () => {
    const repository = new InMemoryRepository<string, Doc>({ aggregate: Doc });
    for (const id of ['a', 'b', 'c']) await repository.insert(new Doc(id, id));
    for (const id of ['a', 'b', 'c']) {
      const doc = (await repository.findById(id))!;
      doc.text += '!';
      await repository.update(doc);
    }
    const replica = new InMemoryReadReplica<string, unknown>();
    for (const id of ['a', 'b', 'c']) await replica.upsert(id, 1, { stale: true });
    const failing = new Error('replica write refused');
    const original = replica.upsert.bind(replica);
    replica.upsert = async (id, version, snapshot) =>
      id === 'b' ? Promise.reject(failing) : original(id, version, snapshot);

    const report = await new ReadReplicaReconciler(repository, replica).run();
    expect(report).toEqual({
      scanned: 3,
      ok: 0,
      stale: 3,
      orphans: 0,
      resynced: 2,
      purged: 0,
      failed: 1,
      errors: [{ id: 'b', error: failing }],
    });
    expect(replica.get('a')).toEqual({ id: 'a', version: 2, snapshot: { id: 'a', text: 'a!' } });
    expect(replica.get('b')!.version).toBe(1);
  });

  it('resync(ids) brings in aggregates the replica never heard of and purges vanished ones', async () => {
    const repository = new InMemoryRepository<string, Doc>({ aggregate: Doc });
    await repository.insert(new Doc('lost', 'first UPSERT never arrived'));
    const replica = new InMemoryReadReplica<string, unknown>();
    await replica.upsert('gone', 4, {});
    const report = await new ReadReplicaReconciler(repository, replica).resync(['lost', 'gone']);
    expect(report).toMatchObject({ scanned: 2, resynced: 1, orphans: 1, purged: 1, failed: 0 });
    expect(replica.all().map((r) => [r.id, r.version])).toEqual([['lost', 1]]);
  });

  it('refuses a page size below 1', () => {
    expect(
      () =>
        new ReadReplicaReconciler(new InMemoryRepository<string, Doc>(), new InMemoryReadReplica(), { pageSize: 0 }),
    ).toThrow(RangeError);
  });
});
