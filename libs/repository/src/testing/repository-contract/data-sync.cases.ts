import { describe, expect, it, jest } from '@jest/globals';
import { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { DataSyncEventBus } from '../../data-sync/data-sync-event-bus.js';
import { DuplicateAggregateError, OptimisticLockError } from '../../errors.js';
import { Counter } from '../counter.aggregate.js';
import type { CounterRepositoryClass, RepositoryContractContext } from './contract-context.js';

/** Cases of describeRepositoryContract (see ../repository.contract.ts). */
export function describeDataSyncCases(context: RepositoryContractContext): void {
  const { harness, fixture, stored } = context;
  describe('the data-sync hook', () => {
    it('fires once before every insert, update, save and remove, and what it collected is what is published', async () => {
      const f = fixture();
      const counter = new Counter('h', 'hooked');
      const hook = jest.spyOn(counter, 'triggerDataSyncHook');

      await f.repository.insert(counter);
      expect(hook).toHaveBeenCalledTimes(1);
      counter.increment();
      await f.repository.update(counter);
      expect(hook).toHaveBeenCalledTimes(2);
      counter.increment();
      await f.repository.save(counter);
      expect(hook).toHaveBeenCalledTimes(3);
      await f.repository.remove(counter);
      expect(hook).toHaveBeenCalledTimes(4);

      expect(f.published).toEqual([
        {
          type: 'UPSERT',
          eventId: expect.any(String),
          aggregate: 'Counter',
          id: 'h',
          version: 1,
          snapshot: { id: 'h', label: 'hooked', count: 0, tags: [] },
        },
        {
          type: 'UPSERT',
          eventId: expect.any(String),
          aggregate: 'Counter',
          id: 'h',
          version: 2,
          snapshot: { id: 'h', label: 'hooked', count: 1, tags: [] },
        },
        {
          type: 'UPSERT',
          eventId: expect.any(String),
          aggregate: 'Counter',
          id: 'h',
          version: 3,
          snapshot: { id: 'h', label: 'hooked', count: 2, tags: [] },
        },
        { type: 'PURGE', eventId: expect.any(String), aggregate: 'Counter', id: 'h', version: 4 },
      ]);
    });

    it('publishes what an extended hook collects, and only for the write it fired for', async () => {
      class AuditedCounter extends Counter {
        override triggerDataSyncHook(): void {
          super.triggerDataSyncHook();
          this.collectDataSyncEvent(
            DataSyncEvent.upsert('CounterAudit', this.id, this.newVersion, { audited: true } as never),
          );
        }
      }
      const f = fixture();
      const counter = new AuditedCounter('aud', 'audited');
      // A hook fired outside a write describes no stored fact: the next write drops it.
      counter.triggerDataSyncHook();
      expect(counter.getDataSyncEvents()).toHaveLength(2);
      await f.repository.insert(counter);
      expect(f.published.map((e) => [e.aggregate, e.version])).toEqual([
        ['Counter', 1],
        ['CounterAudit', 1],
      ]);
      expect(counter.getDataSyncEvents()).toEqual([]);
    });

    it('a snapshot is taken at hook time: changing the aggregate afterwards does not change a published event', async () => {
      const f = fixture();
      const counter = new Counter('snap', 'snap');
      await f.repository.insert(counter);
      counter.tags.push('later');
      const event = f.published[0];
      expect(event.type === 'UPSERT' && event.snapshot).toEqual({ id: 'snap', label: 'snap', count: 0, tags: [] });
      expect(Object.isFrozen(event)).toBe(true);
    });
  });

  describe('failed writes publish nothing', () => {
    it('a stale update is an OptimisticLockError (aggregate, id, expected version); nothing published or written', async () => {
      const f = fixture();
      await stored(f, 'race', 'race');
      const first = (await f.repository.findById('race'))!;
      const second = (await f.repository.findById('race'))!;
      first.increment(1);
      second.increment(100);
      await f.repository.update(first);
      const error = await f.repository.update(second).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OptimisticLockError);
      expect(error).toMatchObject({ aggregate: 'Counter', id: 'race', expectedVersion: 1 });
      expect([second.oldVersion, second.newVersion]).toEqual([1, 2]);
      expect(f.published.map((e) => e.version)).toEqual([2]);
      const now = (await f.repository.findById('race'))!;
      expect([now.count, now.oldVersion]).toEqual([1, 2]);
    });

    it('a doUpdate that throws publishes nothing and leaves the versions; the retry publishes exactly once', async () => {
      let failures = 1;
      const Failing = class extends (harness().Repository as unknown as new (o: object) => {
        doUpdate(c: Counter): Promise<void>;
      }) {
        override async doUpdate(counter: Counter): Promise<void> {
          if (failures-- > 0) throw new Error('store unavailable');
          return super.doUpdate(counter);
        }
      } as unknown as CounterRepositoryClass;
      const f = fixture({}, Failing);
      const counter = await stored(f, 'flaky');
      counter.increment();
      await expect(f.repository.update(counter)).rejects.toThrow('store unavailable');
      expect(f.published).toEqual([]);
      expect([counter.oldVersion, counter.newVersion]).toEqual([1, 2]);
      expect(await f.repository.currentVersion(counter.id)).toBe(1);

      await f.repository.update(counter);
      expect(f.published).toHaveLength(1);
      expect(f.published[0]).toMatchObject({ type: 'UPSERT', version: 2, snapshot: { count: 1 } });
      expect(await f.repository.currentVersion(counter.id)).toBe(2);
    });

    it('a duplicate insert is a DuplicateAggregateError and publishes nothing', async () => {
      const f = fixture();
      await stored(f, 'dup', 'dup');
      await expect(f.repository.insert(new Counter('dup', 'other'))).rejects.toBeInstanceOf(DuplicateAggregateError);
      expect(f.published).toEqual([]);
      expect((await f.repository.findById('dup'))!.label).toBe('dup');
    });

    it('a handler that throws does not fail the write (it is stored) nor starve the other handlers', async () => {
      const errors: unknown[] = [];
      const bus = new DataSyncEventBus({ onHandlerError: (error) => void errors.push(error) });
      const received: DataSyncEvent[] = [];
      bus.subscribe(Counter, () => {
        throw new Error('projection down');
      });
      bus.subscribe(Counter, (events) => void received.push(...events));
      const target = harness();
      const repository = new target.Repository({ ...target.options(), aggregate: Counter, publisher: bus });
      await repository.insert(new Counter('h1', 'x'));
      expect(await repository.currentVersion('h1')).toBe(1);
      expect(errors).toHaveLength(1);
      expect(received.map((e) => e.id)).toEqual(['h1']);
    });
  });
}
