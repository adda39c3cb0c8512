import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import { newEventId } from './event-id.js';

export const DataSyncEventType = {
  /** The aggregate was inserted or updated: the replica should hold `snapshot` at `version`. */
  UPSERT: 'UPSERT',
  /** The aggregate was removed: the replica should drop it. */
  PURGE: 'PURGE',
} as const;
export type DataSyncEventType = (typeof DataSyncEventType)[keyof typeof DataSyncEventType];

interface DataSyncEventBase<ID extends AggregateId> {
  /**
   * A UUID (version 7: time-ordered), unique per event: the same event delivered twice (at
   * least once means it can be) carries the same id, so a broker or a consumer can drop the repeat.
   */
  readonly eventId: string;
  /** The aggregate's name (its `@Aggregate` name, else its class name). */
  readonly aggregate: string;
  readonly id: ID;
  /** The version the write stored: the aggregate's `newVersion` when the hook fired. */
  readonly version: number;
  /**
   * With an outbox: not delivered before this time (epoch ms), and neither are the later events
   * of its instance (docs/outbox.md, "Held events"). Without one it is published at once.
   */
  readonly availableAt?: number;
}

export interface UpsertDataSyncEvent<ID extends AggregateId = AggregateId, S = unknown> extends DataSyncEventBase<ID> {
  readonly type: typeof DataSyncEventType.UPSERT;
  readonly snapshot: S;
}

export interface PurgeDataSyncEvent<ID extends AggregateId = AggregateId> extends DataSyncEventBase<ID> {
  readonly type: typeof DataSyncEventType.PURGE;
}

/** What a write tells read models. Collected by `triggerDataSyncHook`, published after the write. */
export type DataSyncEvent<ID extends AggregateId = AggregateId, S = unknown> =
  UpsertDataSyncEvent<ID, S> | PurgeDataSyncEvent<ID>;

/** Factories for the two kinds (frozen: one event object is shared by every handler). */
export const DataSyncEvent = {
  upsert<ID extends AggregateId, S>(
    aggregate: string,
    id: ID,
    version: number,
    snapshot: S,
    options?: { availableAt?: number },
  ): UpsertDataSyncEvent<ID, S> {
    const event = { type: DataSyncEventType.UPSERT, eventId: newEventId(), aggregate, id, version, snapshot };
    return Object.freeze(options?.availableAt === undefined ? event : { ...event, availableAt: options.availableAt });
  },
  purge<ID extends AggregateId>(
    aggregate: string,
    id: ID,
    version: number,
    options?: { availableAt?: number },
  ): PurgeDataSyncEvent<ID> {
    const event = { type: DataSyncEventType.PURGE, eventId: newEventId(), aggregate, id, version };
    return Object.freeze(options?.availableAt === undefined ? event : { ...event, availableAt: options.availableAt });
  },
};
