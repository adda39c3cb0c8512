import { describe, expect, it } from '@jest/globals';
import { AggregateRoot, collectWriteEvents, NEW_AGGREGATE_VERSION, setStoredVersion } from './aggregate-root.js';

class Account extends AggregateRoot<string> {
  balance = 0;
  owner = { name: 'ada' };
  constructor(id?: string) {
    super(id);
  }
}

describe('AggregateRoot', () => {
  it('starts new at version 0, next write at 1', () => {
    const account = new Account('a');
    expect(NEW_AGGREGATE_VERSION).toBe(0);
    expect([account.isNew(), account.oldVersion, account.newVersion, account.isDeleted()]).toEqual([true, 0, 1, false]);
  });

  it('a stored version makes it not new, with newVersion one above', () => {
    const account = new Account('a');
    setStoredVersion(account, 7);
    expect([account.isNew(), account.oldVersion, account.newVersion]).toEqual([false, 7, 8]);
  });

  it('the hook collects UPSERT with a detached snapshot and newVersion, or PURGE once deleted', () => {
    const account = new Account('a');
    setStoredVersion(account, 2);
    account.balance = 5;
    account.triggerDataSyncHook();
    account.owner.name = 'changed';
    account.markDeleted();
    account.triggerDataSyncHook();
    expect(account.getDataSyncEvents()).toEqual([
      {
        type: 'UPSERT',
        eventId: expect.any(String),
        aggregate: 'Account',
        id: 'a',
        version: 3,
        snapshot: { id: 'a', balance: 5, owner: { name: 'ada' } },
      },
      { type: 'PURGE', eventId: expect.any(String), aggregate: 'Account', id: 'a', version: 3 },
    ]);
    expect(account.dataSyncEvents).toEqual(account.getDataSyncEvents());
  });

  it('keeps its versions and events out of snapshots, spreads and JSON', () => {
    const account = new Account('a');
    setStoredVersion(account, 4);
    account.triggerDataSyncHook();
    expect(Object.keys(account)).toEqual(['id', 'balance', 'owner']);
    expect(JSON.parse(JSON.stringify(account))).toEqual({ id: 'a', balance: 0, owner: { name: 'ada' } });
    expect(account.toSnapshot()).toEqual({ id: 'a', balance: 0, owner: { name: 'ada' } });
    // A copy made from its fields is a new aggregate: it shares no versions or events with it.
    const copy = Object.assign(Object.create(Account.prototype) as Account, account);
    expect([copy.oldVersion, copy.getDataSyncEvents()]).toEqual([0, []]);
    setStoredVersion(copy, 9);
    expect(account.oldVersion).toBe(4);
    expect({ ...account }).toEqual({ id: 'a', balance: 0, owner: { name: 'ada' } });
  });

  it('works on an instance rebuilt without its constructor', () => {
    const rebuilt = Object.assign(Object.create(Account.prototype) as Account, {
      id: 'r',
      balance: 1,
      owner: { name: 'x' },
    });
    expect([rebuilt.isNew(), rebuilt.oldVersion]).toEqual([true, 0]);
    rebuilt.triggerDataSyncHook();
    expect(rebuilt.getDataSyncEvents()).toHaveLength(1);
  });

  it('a write takes only what its own hook collected, under the name it is stored as', () => {
    const account = new Account('a');
    account.triggerDataSyncHook();
    account.triggerDataSyncHook();
    const events = collectWriteEvents(account, 'account');
    expect(events).toEqual([
      {
        type: 'UPSERT',
        eventId: expect.any(String),
        aggregate: 'account',
        id: 'a',
        version: 1,
        snapshot: { id: 'a', balance: 0, owner: { name: 'ada' } },
      },
    ]);
    expect(account.getDataSyncEvents()).toEqual([]);
  });

  it('a snapshot is what structuredClone makes of the data fields, whatever they hold (primitives only take a shortcut)', () => {
    class Flat extends AggregateRoot<string> {
      label = 'x';
      count = 1;
      big = 10n;
      nothing: undefined = undefined;
      empty = null;
      flag = true;
      run(): void {}
    }
    class Deep extends Flat {
      when = new Date(0);
      tags = ['a'];
      shared = this.tags;
    }
    for (const aggregate of [new Flat('f'), new Deep('d')]) {
      const fields = Object.fromEntries(Object.entries(aggregate).filter(([, v]) => typeof v !== 'function'));
      const snapshot = aggregate.toSnapshot() as Record<string, unknown>;
      expect(snapshot).toStrictEqual(structuredClone(fields));
      expect(Object.keys(snapshot)).toEqual(Object.keys(fields));
      // Detached: changing the aggregate afterwards changes no snapshot.
      aggregate.label = 'changed';
      expect(snapshot.label).toBe('x');
      if (aggregate instanceof Deep) {
        aggregate.tags.push('later');
        expect(snapshot.tags).toEqual(['a']);
      }
    }
    const deep = new Deep('d').toSnapshot() as unknown as Deep;
    expect(deep.shared).toBe(deep.tags);
    class Odd extends AggregateRoot<string> {
      marker = Symbol('m');
    }
    expect(() => new Odd('o').toSnapshot()).toThrow();
  });
});
