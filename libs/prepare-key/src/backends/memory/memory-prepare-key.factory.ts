import { PrepareKeyArgumentError } from '../../errors.js';
import type { PrepareKey } from '../../prepare-key.js';
import { PrepareKeyFactory } from '../../prepare-key.factory.js';
import { assertName } from '../../prepare-key.validation.js';
import type { MemoryPrepareKeyFactoryOptions } from './memory-prepare-key.interfaces.js';
import { MemoryPrepareKey } from './memory-prepare-key.js';
import { MemoryRecordStore } from './memory-record-store.js';

const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The embedded backend: one process, nothing persisted. Right for development, tests and a
 * single-instance application; several instances of an application each have their own
 * reservations, so use Redis or MongoDB as soon as there is more than one.
 *
 * PrepareKeys created under one name by the same factory share their records.
 */
export class MemoryPrepareKeyFactory extends PrepareKeyFactory {
  private readonly stores = new Map<string, MemoryRecordStore>();
  private readonly retentionMs: number;
  private readonly clock: () => number;

  constructor(options: MemoryPrepareKeyFactoryOptions = {}) {
    super();
    const { retentionMs = DEFAULT_RETENTION_MS, clock = Date.now } = options;
    if (typeof retentionMs !== 'number' || Number.isNaN(retentionMs) || retentionMs < 0) {
      throw new PrepareKeyArgumentError(
        `MemoryPrepareKeyFactory: retentionMs must be a non-negative number of milliseconds (or Infinity), got ${String(retentionMs)}`,
      );
    }
    if (typeof clock !== 'function') {
      throw new PrepareKeyArgumentError(
        'MemoryPrepareKeyFactory: clock must be a function returning epoch milliseconds',
      );
    }
    this.retentionMs = retentionMs;
    this.clock = clock;
  }

  create<V = unknown>(name: string): PrepareKey<V> {
    assertName(name);
    let store = this.stores.get(name);
    if (store === undefined) {
      store = new MemoryRecordStore(this.retentionMs);
      this.stores.set(name, store);
    }
    return new MemoryPrepareKey<V>(name, store, this.clock);
  }

  /** The records live in this process: there is no store to reach. */
  override async ping(): Promise<void> {}
}
