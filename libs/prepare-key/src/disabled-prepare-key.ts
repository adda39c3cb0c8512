import { PrepareKeyDisabledError } from './errors.js';
import { PrepareKey } from './prepare-key.js';
import type { RecordPage, StoredRecord } from './prepare-key.interfaces.js';

/**
 * What a key is backed by while PrepareKeyModule runs with `enabled: false`: input is still
 * validated, then every operation rejects with PrepareKeyDisabledError. Nothing is reserved.
 */
export class DisabledPrepareKey<V = unknown> extends PrepareKey<V> {
  constructor(readonly name: string) {
    super();
  }

  protected doPrepare(): Promise<boolean> {
    return this.refuse();
  }

  protected doGetValue(): Promise<StoredRecord | undefined> {
    return this.refuse();
  }

  protected doRollback(): Promise<boolean> {
    return this.refuse();
  }

  protected doReprepare(): Promise<boolean> {
    return this.refuse();
  }

  protected doListPage(): Promise<RecordPage> {
    return this.refuse();
  }

  private async refuse(): Promise<never> {
    throw new PrepareKeyDisabledError(this.name);
  }
}
