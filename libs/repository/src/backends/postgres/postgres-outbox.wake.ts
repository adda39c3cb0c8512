import { Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { activeTransactionFor, preparedStatement } from '@ddd-kit/core/postgres';

const logger = new Logger('PostgresOutboxStore');

/**
 * The least time between two NOTIFYs of one store: a busy writer's stream of commits costs the
 * server one small transaction per millisecond, not one per write, and a relay elsewhere hears
 * of a write at most this much later than it would (at once, after a quiet spell).
 */
export const NOTIFY_GAP_MS = 1;

/**
 * How a PostgresOutboxStore wakes relays once a write with events committed, without a NOTIFY
 * in the writer's transaction: PostgreSQL takes one lock for the whole cluster when a
 * transaction that notified commits and holds it through the commit's WAL flush, so writers
 * that each notified committed one at a time.
 *
 * After the commit (at once for an autocommitted write, from the ambient transaction's
 * `afterCommit` otherwise, never after a rollback):
 * - the relays of this process watching this store are called in process (one microtask per
 *   burst of writes): no round trip;
 * - relays elsewhere get a `NOTIFY` sent on its own autocommitted statement, one at a time per
 *   store and at most one per NOTIFY_GAP_MS: the writes committing meanwhile get one more after
 *   it, not one each (a relay woken claims all that is due, however many writes woke it).
 * A wake-up is a hint: lost (a failed NOTIFY), it costs a relay one poll, never an event.
 * Writes handed to a relay of this process (see PostgresOutboxStore.joinWrite) need neither.
 */
export class OutboxWakeUp {
  private readonly watchers = new Set<() => void>();
  /** Transactions whose commit will wake relays already (one wake-up each, however many writes). */
  private readonly waiting = new WeakSet<object>();
  private localQueued = false;
  private notifying = false;
  private again = false;
  private failing = false;
  /** When the last NOTIFY was sent (performance.now()). */
  private lastAt = -Infinity;

  constructor(
    private readonly pool: Pool,
    /** Undefined: no NOTIFY (relays elsewhere poll); relays of this process are still woken. */
    private readonly channel: string | undefined,
  ) {}

  /**
   * True when a write on `pool` now runs in a transaction whose commit cannot be observed (an
   * ambient transaction of another implementation, without `afterCommit`): its statement must
   * then carry its own NOTIFY, at the old cost, for the notification to follow the commit.
   */
  static mustNotifyInStatement(pool: Pool): boolean {
    const transaction = activeTransactionFor(pool);
    return transaction !== undefined && transaction.afterCommit === undefined;
  }

  /** A write with events just ran on the pool: wakes relays once it is committed (once per transaction). */
  afterWrite(): void {
    const transaction = activeTransactionFor(this.pool);
    if (transaction === undefined) return this.wake();
    // Without afterCommit the write's statement carried its NOTIFY (mustNotifyInStatement).
    if (transaction.afterCommit === undefined || this.waiting.has(transaction)) return;
    this.waiting.add(transaction);
    transaction.afterCommit(() => this.wake());
  }

  /** Wakes every relay: those of this process at once, the others by NOTIFY. */
  wake(): void {
    if (!this.localQueued && this.watchers.size > 0) {
      this.localQueued = true;
      queueMicrotask(() => {
        this.localQueued = false;
        for (const watcher of this.watchers) watcher();
      });
    }
    if (this.channel === undefined) return;
    if (this.notifying) {
      this.again = true;
      return;
    }
    this.notifying = true;
    void this.notify(this.channel);
  }

  /** Calls `watcher` on every wake-up of this process; resolves a function that stops it. */
  watchInProcess(watcher: () => void): () => void {
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  private async notify(channel: string): Promise<void> {
    try {
      do {
        const wait = this.lastAt + NOTIFY_GAP_MS - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        this.again = false;
        this.lastAt = performance.now();
        // On the pool, not the writer's connection: a transaction of its own, which writes no
        // WAL but its commit record, so it never waits for a flush.
        await this.pool.query(preparedStatement(this.pool, "SELECT pg_notify($1, '')", [channel]));
        this.failing = false;
      } while (this.again);
    } catch (error) {
      if (!this.failing)
        logger.warn(
          `NOTIFY ${channel} failed (${error instanceof Error ? error.message : String(error)}); relays in other processes find the events at their next poll`,
        );
      this.failing = true;
    } finally {
      this.notifying = false;
    }
  }
}
