import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import type { OutboxClaim, OutboxStore } from '../../outbox/outbox.interfaces.js';
import type { IRepository } from '../../repository/repository.interfaces.js';
import { Counter } from '../counter.aggregate.js';

/** What a store hands the contract: the store, and a Counter repository that writes its events into it. */
export interface OutboxStoreContractTarget {
  /** The store under test, empty. */
  store: OutboxStore;
  /** A Counter repository whose writes store their data-sync events in `store`. */
  repository: IRepository<string, Counter>;
  close(): Promise<void>;
}

/** What each HeldCounter holds its events until: beside it, not a field (not in its snapshot, nor copied with it). */
const holds = new WeakMap<object, { until: unknown; alongside: boolean }>();

/**
 * A Counter whose writes hold their UPSERT until a time (DataSyncEvent's `availableAt`) while
 * `hold` set one; with `alongside`, a write collects its usual UPSERT and a held one after it.
 */
export class HeldCounter extends Counter {
  hold(until: unknown, alongside = false): this {
    holds.set(this, { until, alongside });
    return this;
  }

  override triggerDataSyncHook(): void {
    const held = holds.get(this);
    if (held === undefined || held.until === undefined) return super.triggerDataSyncHook();
    if (held.alongside) super.triggerDataSyncHook();
    const event = DataSyncEvent.upsert(this.aggregateTypeName(), this.id, this.newVersion, this.toSnapshot(), {
      availableAt: held.until as number,
    });
    this.collectDataSyncEvent(event);
  }
}

/** The lease of the contract's claims. */
export const LEASE = 30_000;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What every group of cases uses: the case's target (a fresh one per case), and helpers on it. */
export interface OutboxStoreContractContext {
  /** The target of the case running (set up before each case). */
  target(): OutboxStoreContractTarget;
  /** Inserts `id` and updates it until it is at `version`; returns the aggregate (a HeldCounter, not holding). */
  writeVersions(id: string, version: number): Promise<HeldCounter>;
  /** A claim by `owner` at `now`. */
  claim(owner: string, now: number, limit?: number, leaseMs?: number): Promise<OutboxClaim[]>;
  /** The instances of `claims`, sorted. */
  ids(claims: OutboxClaim[]): AggregateId[];
}

export function outboxStoreContractContext(target: () => OutboxStoreContractTarget): OutboxStoreContractContext {
  return {
    target,
    writeVersions: async (id, version) => {
      const { repository } = target();
      const counter = new HeldCounter(id, `label ${id}`);
      await repository.insert(counter);
      for (let v = 2; v <= version; v++) {
        counter.increment();
        await repository.update(counter);
      }
      return counter;
    },
    claim: (owner, now, limit = 100, leaseMs = LEASE) => target().store.claim({ owner, now, limit, leaseMs }),
    ids: (claims) => claims.map((c) => c.aggregateId).sort(),
  };
}
