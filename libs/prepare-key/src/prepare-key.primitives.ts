import type { PrepareKey } from './prepare-key.js';
import type { RecordPage, RollbackCondition, StoredRecord } from './prepare-key.interfaces.js';

/**
 * The protected backend SPI of a PrepareKey, reachable from outside its class hierarchy.
 * Used by wrappers that forward to another PrepareKey (the injected proxy, test doubles), so
 * a helper method that calls `this.doPrepare(...)` on a wrapper still reaches the backend.
 * Internal: not part of the package's public surface.
 */
export interface PrepareKeyPrimitives {
  doPrepare(key: string, value: string, ttlAt: number, op: string): Promise<boolean>;
  doPrepareOrUndo(key: string, value: string, ttlAt: number, op: string): Promise<boolean>;
  doGetValue(key: string): Promise<StoredRecord | undefined>;
  doGetValues(keys: readonly string[]): Promise<Array<StoredRecord | undefined>>;
  doRollback(key: string, op: string, condition?: RollbackCondition): Promise<boolean>;
  doReprepare(key: string, value: string, ttlAt: number, op: string, expected?: string): Promise<boolean>;
  doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage>;
  now(): number;
}

export const PRIMITIVE_NAMES = [
  'doPrepare',
  'doPrepareOrUndo',
  'doGetValue',
  'doGetValues',
  'doRollback',
  'doReprepare',
  'doListPage',
  'now',
] as const;

export function primitivesOf(prepareKey: PrepareKey<any>): PrepareKeyPrimitives {
  return prepareKey as unknown as PrepareKeyPrimitives;
}
