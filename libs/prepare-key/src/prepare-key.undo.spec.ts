import { describe, expect, it } from '@jest/globals';
import { OperationTimeoutError } from '@ddd-kit/core';
import { waitFor } from '../../../test/support/wait.js';
import { PrepareKey } from './prepare-key.js';
import type { RecordPage, RollbackCondition, StoredRecord } from './prepare-key.interfaces.js';

/** A backend whose store took the write and then fell silent: each primitive fails as `prepare` says. */
class SilentAfterWrite extends PrepareKey<string> {
  readonly name = 'silent';
  readonly rollbacks: Array<{ key: string; condition?: RollbackCondition }> = [];

  constructor(private readonly prepareFails: unknown) {
    super();
  }

  protected doPrepare(): Promise<boolean> {
    return Promise.reject(this.prepareFails);
  }
  protected doRollback(key: string, _op: string, condition?: RollbackCondition): Promise<boolean> {
    this.rollbacks.push({ key, condition });
    return new Promise<boolean>(() => undefined); // the store answers nothing
  }
  protected doGetValue(): Promise<StoredRecord | undefined> {
    return Promise.reject(new Error('not used'));
  }
  protected doReprepare(): Promise<boolean> {
    return Promise.reject(new Error('not used'));
  }
  protected doListPage(): Promise<RecordPage> {
    return Promise.reject(new Error('not used'));
  }
}

describe('a prepare whose outcome is unknown', () => {
  it('after the operation deadline: sends the release of its own write and rejects without waiting for it', async () => {
    const timeout = new OperationTimeoutError('Redis prepare', 2_000);
    const key = new SilentAfterWrite(timeout);
    // The release never settles: a prepare that waited for it would never settle either.
    const error = await waitFor(
      'the prepare to reject',
      key.prepare('name', 'caller').then(
        () => 'resolved',
        (caught: unknown) => caught,
      ),
    );
    expect(error).toBe(timeout);
    expect(key.rollbacks).toEqual([{ key: 'name', condition: { op: expect.any(String) } }]);
  });

  it('after any other failure: waits for the release before it rejects, as before', async () => {
    const key = new SilentAfterWrite(new Error('Connection is closed.'));
    let settled = false;
    void key.prepare('name', 'caller').finally(() => (settled = true));
    await waitFor('the release to be sent', () => key.rollbacks.length === 1);
    expect(settled).toBe(false);
  });
});
