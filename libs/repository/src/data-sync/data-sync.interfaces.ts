import type { AggregateClass } from '../aggregate/aggregate-root.js';
import type { DataSyncEvent } from './data-sync-event.js';

/** Hands the events of a successful write to whoever keeps read models. */
export interface DataSyncPublisher {
  publish(aggregate: AggregateClass, events: readonly DataSyncEvent[]): Promise<void>;
  /**
   * Optional: false when the events of `aggregate` would reach nobody now, so that a write need
   * not wait for its commit to publish them (DataSyncEventBus: no handler subscribed).
   */
  listensTo?(aggregate: AggregateClass): boolean;
}

/** Receives the events of one successful write, in the order the hook collected them. */
export type DataSyncHandler<E extends DataSyncEvent = DataSyncEvent> = (events: readonly E[]) => unknown;
