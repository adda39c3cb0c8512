import { PrepareKey } from '../../prepare-key.js';
import type { RecordPage, RollbackCondition, StoredRecord } from '../../prepare-key.interfaces.js';
import type { MemoryRecordStore } from './memory-record-store.js';

/**
 * A PrepareKey over an in-process Map. Each primitive does all its work synchronously
 * inside its async method, so it is one uninterrupted step on the event loop: concurrent
 * callers in this process see each operation as atomic. Values are kept as canonical JSON
 * strings, so what a caller gets back is always a fresh copy. Nothing lies between the caller
 * and the Map, so no command is ever resent: operation ids are kept only for the conditional
 * rollback that undoes a prepare.
 */
export class MemoryPrepareKey<V = unknown> extends PrepareKey<V> {
  constructor(
    readonly name: string,
    private readonly store: MemoryRecordStore,
    private readonly clock: () => number,
  ) {
    super();
  }

  protected override now(): number {
    return this.clock();
  }

  protected async doPrepare(key: string, value: string, ttlAt: number, op: string): Promise<boolean> {
    const now = this.clock();
    const record = this.store.find(key, now);
    if (record !== undefined && record.ttlAt > now) return false;
    this.store.put(key, value, ttlAt, op, now);
    return true;
  }

  protected async doGetValue(key: string): Promise<StoredRecord | undefined> {
    const record = this.store.find(key, this.clock());
    return record && { value: record.value, ttlAt: record.ttlAt };
  }

  protected async doRollback(key: string, _op: string, condition?: RollbackCondition): Promise<boolean> {
    const record = this.store.find(key, this.clock());
    if (record === undefined) return false;
    if (condition?.value !== undefined && record.value !== condition.value) return false;
    if (condition?.op !== undefined && record.op !== condition.op) return false;
    this.store.delete(key);
    return true;
  }

  protected async doReprepare(
    key: string,
    value: string,
    ttlAt: number,
    op: string,
    expected?: string,
  ): Promise<boolean> {
    const now = this.clock();
    const record = this.store.find(key, now);
    if (record === undefined) return false;
    if (expected === undefined ? record.ttlAt <= now : record.value !== expected) return false;
    record.value = value;
    record.ttlAt = ttlAt;
    record.op = op;
    return true;
  }

  protected async doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage> {
    return this.store.page(cursor, pageSize, this.clock());
  }
}
