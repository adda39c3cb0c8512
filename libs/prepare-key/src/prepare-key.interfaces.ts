import type { PreparedValue } from './prepared-value.js';

/** A record as a backend stores it: the value's canonical JSON and its ttlAt. */
export interface StoredRecord {
  value: string;
  ttlAt: number;
}

/** What a conditional rollback compares: the record's value, or the operation that wrote it. */
export type RollbackCondition = { value: string; op?: undefined } | { op: string; value?: undefined };

/** One page of a backend's listing; `next` is absent on the last page. */
export interface RecordPage {
  records: Array<StoredRecord & { key: string }>;
  next?: string;
}

/** A record as `PrepareKey.records()` yields it. */
export interface PreparedRecord<V> {
  key: string;
  value: PreparedValue<V>;
}
