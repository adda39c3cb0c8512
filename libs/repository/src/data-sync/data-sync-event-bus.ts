import { Logger } from '@nestjs/common';
import { getAggregateName } from '../aggregate/aggregate-name.utils.js';
import type { AggregateClass } from '../aggregate/aggregate-root.js';
import type { DataSyncEvent } from './data-sync-event.js';
import type { DataSyncHandler, DataSyncPublisher } from './data-sync.interfaces.js';

export interface DataSyncEventBusOptions {
  /** Called when a handler throws or rejects; the default logs the error. */
  onHandlerError?: (error: unknown, events: readonly DataSyncEvent[], aggregate: AggregateClass) => void;
}

/**
 * In-process delivery of data-sync events to handlers subscribed per aggregate class
 * (RepositoryModule subscribes every `@OnDataSync` method at bootstrap). `publish` calls the
 * handlers one after another and resolves once all have finished, so a read model kept by a
 * handler is up to date when the write returns. A handler's failure is reported, not thrown:
 * the write it describes is already stored, and the other handlers still get the events.
 * `publish` is in memory only: events of a process that dies after a write are lost, which is
 * what reconciliation repairs — unless the outbox is on (RepositoryModule.forRoot({ outbox })):
 * then writes store their events and OutboxRelay hands them to `deliver`, at least once.
 */
export class DataSyncEventBus implements DataSyncPublisher {
  private readonly logger = new Logger('DataSyncEventBus');
  private readonly handlers = new Map<AggregateClass, DataSyncHandler[]>();
  private readonly onHandlerError: NonNullable<DataSyncEventBusOptions['onHandlerError']>;
  private pendingDiscovery?: () => void;

  constructor(options: DataSyncEventBusOptions = {}) {
    this.onHandlerError =
      options.onHandlerError ??
      ((error, events, aggregate) =>
        this.logger.error(
          `A data-sync handler of ${aggregate.name} failed on ${events.length} event(s); its read model is behind until reconciliation`,
          error instanceof Error ? error.stack : String(error),
        ));
  }

  /** Adds a handler for the events of `aggregate`; returns a function that removes it. */
  subscribe<E extends DataSyncEvent = DataSyncEvent>(
    aggregate: AggregateClass,
    handler: DataSyncHandler<E>,
  ): () => void {
    const list = this.handlers.get(aggregate) ?? [];
    list.push(handler as DataSyncHandler);
    this.handlers.set(aggregate, list);
    return () => {
      const current = this.handlers.get(aggregate);
      if (current)
        this.handlers.set(
          aggregate,
          current.filter((h) => h !== handler),
        );
    };
  }

  /** Runs `discover` once, before the first publish (RepositoryModule finds handlers this way). */
  beforeFirstPublish(discover: () => void): void {
    this.pendingDiscovery = discover;
  }

  /** The number of handlers subscribed to `aggregate`. */
  handlerCount(aggregate: AggregateClass): number {
    return this.handlers.get(aggregate)?.length ?? 0;
  }

  /** True when `publish(aggregate, …)` would reach a handler (after the discovery that runs before the first publish). */
  listensTo(aggregate: AggregateClass): boolean {
    this.discover();
    return this.handlerCount(aggregate) > 0;
  }

  async publish(aggregate: AggregateClass, events: readonly DataSyncEvent[]): Promise<void> {
    this.discover();
    const handlers = this.handlers.get(aggregate);
    if (handlers === undefined || handlers.length === 0 || events.length === 0) return;
    const delivered = Object.freeze([...events]);
    for (const handler of [...handlers]) {
      try {
        await handler(delivered);
      } catch (error) {
        this.onHandlerError(error, delivered, aggregate);
      }
    }
  }

  /**
   * Delivers the events of one write to the handlers of every aggregate class named
   * `aggregate` (its `@Aggregate` name, else its class name), one handler after another, and
   * rejects when any of them failed — after running the others. OutboxRelay delivers through
   * this: a rejection is a failed attempt, retried later (every handler runs again then, so
   * handlers must be idempotent). Resolves at once when no handler listens.
   */
  async deliver(aggregate: string, events: readonly DataSyncEvent[]): Promise<void> {
    this.discover();
    if (events.length === 0) return;
    const delivered = Object.freeze([...events]);
    const failures: unknown[] = [];
    for (const [type, handlers] of [...this.handlers]) {
      if (handlers.length === 0 || getAggregateName(type) !== aggregate) continue;
      for (const handler of [...handlers]) {
        try {
          await handler(delivered);
        } catch (error) {
          failures.push(error);
        }
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1)
      throw new AggregateError(failures, `${failures.length} data-sync handlers of ${aggregate} failed`);
  }

  private discover(): void {
    if (this.pendingDiscovery !== undefined) {
      const discover = this.pendingDiscovery;
      this.pendingDiscovery = undefined;
      discover();
    }
  }
}
