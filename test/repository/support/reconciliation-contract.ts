// Reconciliation against a real write model: a replica fed by data-sync events, then damaged
// the ways production damages it, then repaired by one reconciler run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSyncEventBus, type DataSyncEvent } from '@ddd-kit/repository';
import { InMemoryReadReplica, ReadReplicaReconciler } from '@ddd-kit/repository/reconciliation';
import { Counter, type CounterSnapshot } from './counter.aggregate.js';
import type { RepositoryContractTarget } from '@ddd-kit/repository/testing';

/** The repository contract's target; its Counter repository also deletes around itself (`deleteBehindTheRepository`). */
type ReconciliationContractTarget = RepositoryContractTarget;

export function describeReconciliationContract(name: string, setup: () => Promise<ReconciliationContractTarget>): void {
  describe(`reconciliation: ${name}`, () => {
    let harness: ReconciliationContractTarget;
    beforeAll(async () => {
      harness = await setup();
    });
    afterAll(async () => {
      await harness?.close();
    });

    it('one run repairs stale entries, orphans and a dropped PURGE, and reports exactly what was injected', async () => {
      const bus = new DataSyncEventBus();
      const repository = new harness.Repository({ ...harness.options(), aggregate: Counter, publisher: bus });
      const replica = new InMemoryReadReplica<string, CounterSnapshot>();
      // The projection, with a switch to lose messages on the way.
      let lose: (event: DataSyncEvent) => boolean = () => false;
      bus.subscribe(Counter, (events) => replica.apply(events.filter((event) => !lose(event))));

      const ids = Array.from({ length: 12 }, (_, i) => `c${String(i).padStart(2, '0')}`);
      for (const id of ids) await repository.insert(new Counter(id, `label ${id}`));
      expect(replica.size).toBe(12);

      const update = async (id: string, times = 1) => {
        for (let i = 0; i < times; i++) {
          const counter = (await repository.findById(id))!;
          counter.increment();
          await repository.update(counter);
        }
      };

      // STALE by lost UPSERTs: c01, c02 one version behind, c03 two behind.
      lose = (event) => event.type === 'UPSERT';
      await update('c01');
      await update('c02');
      await update('c03', 2);
      // ORPHAN by a lost PURGE: c04 removed through the repository, its message dropped.
      lose = (event) => event.type === 'PURGE';
      await repository.remove((await repository.findById('c04'))!);
      lose = () => false;
      // ORPHAN by a delete outside remove: no hook, no event at all.
      await (
        repository as unknown as { deleteBehindTheRepository(id: string): Promise<void> }
      ).deleteBehindTheRepository('c05');
      // STALE injected: c06 rolled back to an older snapshot; c07 claims a version the write model never had.
      await update('c06');
      const c06v1 = { id: 'c06', label: 'label c06', count: 0, tags: [] };
      await replica.upsert('c06', 1, c06v1);
      await replica.upsert('c07', 9, { id: 'c07', label: 'forged', count: 99, tags: [] });
      // ORPHANS injected: entries the write model never had.
      await replica.upsert('ghost-1', 3, { id: 'ghost-1', label: 'ghost', count: 0, tags: [] });
      await replica.upsert('ghost-2', 1, { id: 'ghost-2', label: 'ghost', count: 0, tags: [] });

      expect(replica.get('c01')!.version).toBe(1);
      expect(replica.get('c04')).toBeDefined();
      expect(await repository.currentVersion('c04')).toBe(-1);
      expect(await repository.currentVersion('c05')).toBe(-1);

      const report = await new ReadReplicaReconciler(repository, replica, { pageSize: 3 }).run();
      expect(report).toEqual({
        scanned: 14,
        ok: 5,
        stale: 5,
        orphans: 4,
        resynced: 5,
        purged: 4,
        failed: 0,
        errors: [],
      });

      // The replica now mirrors the write model, entry for entry.
      const live = ids.filter((id) => id !== 'c04' && id !== 'c05');
      expect(replica.all().map((r) => r.id)).toEqual(live);
      for (const id of live) {
        const counter = (await repository.findById(id))!;
        expect(replica.get(id)).toEqual({ id, version: counter.oldVersion, snapshot: counter.toSnapshot() });
      }
      expect(replica.get('c03')).toMatchObject({ version: 3, snapshot: { count: 2 } });
      expect(replica.get('c07')).toMatchObject({ version: 1, snapshot: { label: 'label c07', count: 0 } });

      const second = await new ReadReplicaReconciler(repository, replica, { pageSize: 4 }).run();
      expect(second).toEqual({
        scanned: 10,
        ok: 10,
        stale: 0,
        orphans: 0,
        resynced: 0,
        purged: 0,
        failed: 0,
        errors: [],
      });
    });
  });
}
