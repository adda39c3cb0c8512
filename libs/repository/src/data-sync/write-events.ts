import { Logger } from '@nestjs/common';
import type { AggregateClass } from '../aggregate/aggregate-root.js';
import type { OutboxStore } from '../outbox/outbox.interfaces.js';
import type { DataSyncEvent } from './data-sync-event.js';
import type { DataSyncPublisher } from './data-sync.interfaces.js';

const logger = new Logger('Repository');

/**
 * Where one repository's data-sync events go once a write succeeded: with an outbox, nowhere
 * from here — the backend stored them with the write and OutboxRelay delivers them; else to the
 * publisher (in process), once the write is durable; with neither, they are dropped.
 */
export class WriteEvents {
  private publisher?: DataSyncPublisher;
  private outboxStore?: OutboxStore;

  /** The outbox the backend stores the events in with each write, if any. */
  get outbox(): OutboxStore | undefined {
    return this.outboxStore;
  }

  setPublisher(publisher: DataSyncPublisher): void {
    this.publisher = publisher;
  }

  setOutbox(outbox: OutboxStore): void {
    this.outboxStore = outbox;
  }

  /** True when `publish` has something to hand over for these events of `aggregate`, to someone who listens. */
  willPublish(aggregate: AggregateClass, events: readonly DataSyncEvent[]): boolean {
    return (
      this.publisher !== undefined &&
      this.outboxStore === undefined &&
      events.length > 0 &&
      (this.publisher.listensTo?.(aggregate) ?? true)
    );
  }

  /**
   * Hands the events of a durable write to the publisher. A failure is logged, not thrown: the
   * write is stored, and failing the call would invite the caller to repeat a write that
   * happened. Read models that missed these events are repaired by reconciliation.
   */
  async publish(aggregate: AggregateClass, events: readonly DataSyncEvent[], what: () => string): Promise<void> {
    if (!this.willPublish(aggregate, events)) return;
    try {
      await this.publisher!.publish(aggregate, events);
    } catch (error) {
      logger.error(
        `Publishing ${events.length} data-sync event(s) of ${what()} failed`,
        error instanceof Error ? error.stack : String(error),
      );
    }
  }
}
