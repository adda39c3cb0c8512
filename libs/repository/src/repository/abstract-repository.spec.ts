import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { AggregateStateError, InvalidAggregateIdError, RepositoryConfigurationError } from '../errors.js';
import { AbstractRepository } from './abstract-repository.js';
import type { LoadedAggregate } from './repository.interfaces.js';

class Item extends AggregateRoot<string> {
  constructor(
    id: string | undefined,
    public name: string,
  ) {
    super(id);
  }
}

/** A store written the way a user writes one for another database: rows with a version column. */
class RowRepository extends AbstractRepository<string, Item> {
  readonly rows = new Map<string, { name: string; version: number }>();
  readonly calls: string[] = [];

  protected async doInsert(item: Item): Promise<void> {
    this.calls.push(`insert ${item.id}@${item.newVersion}`);
    this.rows.set(item.id, { name: item.name, version: item.newVersion });
  }
  protected async doUpdate(item: Item): Promise<void> {
    this.calls.push(`update ${item.id}@${item.oldVersion}->${item.newVersion}`);
    const row = this.rows.get(item.id);
    if (!row || row.version !== item.oldVersion) throw this.conflict(item);
    this.rows.set(item.id, { name: item.name, version: item.newVersion });
  }
  protected async doRemove(item: Item): Promise<void> {
    this.calls.push(`remove ${item.id}@${item.oldVersion}`);
    const row = this.rows.get(item.id);
    if (!row || row.version !== item.oldVersion) throw this.conflict(item);
    this.rows.delete(item.id);
  }
  protected override async doFindById(id: string): Promise<LoadedAggregate<Item> | null> {
    const row = this.rows.get(id);
    return row ? { aggregate: new Item(id, row.name), version: row.version } : null;
  }
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('AbstractRepository', () => {
  it('runs hook, then doXxx, with the versions a store needs; reads go through doFindById', async () => {
    const published: DataSyncEvent[] = [];
    const repository = new RowRepository({
      aggregate: Item,
      publisher: { publish: async (_a, events) => void published.push(...events) },
    });
    const item = new Item('i', 'first');
    await repository.insert(item);
    item.name = 'second';
    await repository.update(item);
    const loaded = (await repository.findById('i'))!;
    expect([loaded.oldVersion, loaded.newVersion, loaded.name]).toEqual([2, 3, 'second']);
    expect(await repository.currentVersion('i')).toBe(2);
    await repository.remove(loaded);
    expect(await repository.currentVersion('i')).toBe(-1);
    expect(repository.calls).toEqual(['insert i@1', 'update i@1->2', 'remove i@2']);
    expect(published.map((e) => `${e.type}@${e.version}`)).toEqual(['UPSERT@1', 'UPSERT@2', 'PURGE@3']);
  });

  it.each(['insert', 'update', 'remove', 'save'])(
    'refuses a subclass that redefines %s, even further down',
    (method) => {
      class Sneaky extends RowRepository {}
      Object.defineProperty(Sneaky.prototype, method, { value: async () => undefined });
      class Deeper extends Sneaky {}
      expect(() => new Sneaky()).toThrow(RepositoryConfigurationError);
      expect(() => new Deeper()).toThrow(new RegExp(`Sneaky redefines ${method}\\(\\)`));
    },
  );

  it('a publisher that fails does not fail the stored write; the failure is logged', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const repository = new RowRepository({
      aggregate: Item,
      publisher: { publish: async () => Promise.reject(new Error('broker down')) },
    });
    const item = new Item('p', 'x');
    await repository.insert(item);
    expect(repository.rows.get('p')).toEqual({ name: 'x', version: 1 });
    expect(item.oldVersion).toBe(1);
    expect(logged).toHaveBeenCalledTimes(1);
    expect(String(logged.mock.calls[0][0])).toMatch(/Publishing 1 data-sync event\(s\) of Item "p" failed/);
  });

  it('an aggregate the caller marked deleted stays marked when remove fails', async () => {
    const repository = new RowRepository({ aggregate: Item });
    await repository.insert(new Item('d', 'x'));
    const stale = (await repository.findById('d'))!;
    await repository.update((await repository.findById('d'))!);
    stale.markDeleted();
    await expect(repository.remove(stale)).rejects.toThrow(/no longer at version 1/);
    expect(stale.isDeleted()).toBe(true);
  });

  it('refuses what is not an AggregateRoot, and generated ids that are not plain values', async () => {
    const repository = new RowRepository({
      aggregate: Item,
      idGenerators: { get: () => ({ generate: () => ({ $gt: '' }) as unknown as string }) },
    });
    await expect(repository.insert({ id: 'x', isNew: () => true } as unknown as Item)).rejects.toBeInstanceOf(
      AggregateStateError,
    );
    await expect(repository.insert(new Item(undefined, 'x'))).rejects.toBeInstanceOf(InvalidAggregateIdError);
    expect(repository.rows.size).toBe(0);
  });

  it('a step that throws at once (the hook, the store, a load) arrives as a rejection, never at the call', async () => {
    /** A store written without `async`: its steps throw where they are called. */
    class EagerRepository extends RowRepository {
      protected override doUpdate(): Promise<void> {
        throw new Error('store down');
      }
      protected override doFindById(): Promise<LoadedAggregate<Item> | null> {
        throw new Error('store down');
      }
    }
    class Throwing extends Item {
      override triggerDataSyncHook(): void {
        throw new Error('hook failed');
      }
    }
    const repository = new EagerRepository({ aggregate: Item });
    const calling = (call: () => Promise<unknown>): Promise<unknown> => {
      let answer: Promise<unknown> | undefined;
      expect(() => (answer = call())).not.toThrow();
      return answer!;
    };
    await expect(calling(() => repository.insert(new Throwing('t', 'x')))).rejects.toThrow('hook failed');
    const item = new Item('i', 'x');
    await repository.insert(item);
    await expect(calling(() => repository.update(item))).rejects.toThrow('store down');
    expect(item.oldVersion).toBe(1);
    await expect(calling(() => repository.findById('i'))).rejects.toThrow('store down');
  });
});
