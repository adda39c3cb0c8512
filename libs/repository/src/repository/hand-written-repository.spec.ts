import { describe, expect, it } from '@jest/globals';
import { AggregateRoot } from '../aggregate/aggregate-root.js';
import { DataSyncEventBus } from '../data-sync/data-sync-event-bus.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { OptimisticLockError } from '../errors.js';
import { AbstractRepository } from './abstract-repository.js';

class Order extends AggregateRoot<string> {
  total = 0;
}

interface Row {
  total: number;
  version: number;
}

/**
 * The shape of seed 004's repositories: the three write primitives and a findById of its
 * own, over a table of rows with a version column. Nothing else is implemented.
 */
class OrderTableRepository extends AbstractRepository<string, Order> {
  readonly rows = new Map<string, Row>();

  override async findById(id: string): Promise<Order | null> {
    const row = this.rows.get(id);
    if (!row) return null;
    const order = new Order(id);
    order.total = row.total;
    order.oldVersion = row.version;
    return order;
  }

  protected async doInsert(order: Order): Promise<void> {
    this.rows.set(order.id, { total: order.total, version: order.newVersion });
  }

  protected async doUpdate(order: Order): Promise<void> {
    const row = this.rows.get(order.id);
    // WHERE version = oldVersion
    if (!row || row.version !== order.oldVersion) throw this.conflict(order);
    this.rows.set(order.id, { total: order.total, version: order.newVersion });
  }

  protected async doRemove(order: Order): Promise<void> {
    const row = this.rows.get(order.id);
    if (!row || row.version !== order.oldVersion) throw this.conflict(order);
    this.rows.delete(order.id);
  }
}

describe('a hand-written AbstractRepository (doInsert/doUpdate/doRemove + its own findById)', () => {
  it('routes save, locks on the version it loaded, publishes after each write, reports -1 when gone', async () => {
    const bus = new DataSyncEventBus();
    const events: DataSyncEvent[] = [];
    bus.subscribe(Order, (published) => {
      events.push(...published);
    });
    const repository = new OrderTableRepository({ aggregate: Order, publisher: bus });

    const order = new Order('o-1');
    order.total = 10;
    await repository.save(order); // new: insert
    expect(repository.rows.get('o-1')).toEqual({ total: 10, version: 1 });
    expect(await repository.currentVersion('o-1')).toBe(1);
    expect(await repository.existsById('o-1')).toBe(true);

    const a = (await repository.findById('o-1'))!;
    const b = (await repository.findById('o-1'))!;
    expect([a.isNew(), a.oldVersion, a.newVersion]).toEqual([false, 1, 2]);
    a.total = 20;
    await repository.save(a); // loaded: update
    b.total = 30;
    await expect(repository.update(b)).rejects.toBeInstanceOf(OptimisticLockError);
    expect(repository.rows.get('o-1')).toEqual({ total: 20, version: 2 });

    await repository.remove((await repository.findById('o-1'))!);
    expect(await repository.currentVersion('o-1')).toBe(-1);
    expect(await repository.existsById('o-1')).toBe(false);
    expect(events.map((e) => [e.type, e.version])).toEqual([
      ['UPSERT', 1],
      ['UPSERT', 2],
      ['PURGE', 3],
    ]);
  });

  it('refuses an oldVersion that is not a non-negative integer', () => {
    const order = new Order('o-2');
    expect(() => (order.oldVersion = -1)).toThrow(RangeError);
    expect(() => (order.oldVersion = 1.5)).toThrow(RangeError);
    expect(order.oldVersion).toBe(0);
  });

  it('says what to implement when neither doFindById nor findById is there', async () => {
    class Incomplete extends AbstractRepository<string, Order> {
      protected async doInsert(): Promise<void> {}
      protected async doUpdate(): Promise<void> {}
      protected async doRemove(): Promise<void> {}
    }
    await expect(new Incomplete({ aggregate: Order }).findById('x')).rejects.toThrow(/doFindById/);
  });

  it('publishes only to a publisher that listens to the aggregate: one that does not is not waited on at all', async () => {
    class CountingBus extends DataSyncEventBus {
      calls = 0;
      override async publish(...args: Parameters<DataSyncEventBus['publish']>): Promise<void> {
        this.calls++;
        return super.publish(...args);
      }
    }
    const bus = new CountingBus();
    const repository = new OrderTableRepository({ aggregate: Order, publisher: bus });
    const order = new Order('o-2');
    await repository.insert(order);
    order.total = 1;
    await repository.update(order);
    expect(bus.calls).toBe(0);
    const events: DataSyncEvent[] = [];
    bus.subscribe(Order, (published) => void events.push(...published));
    order.total = 2;
    await repository.update(order);
    expect(bus.calls).toBe(1);
    expect(events.map((event) => event.version)).toEqual([3]);
  });
});
