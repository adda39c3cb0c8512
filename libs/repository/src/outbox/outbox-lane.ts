import type { Logger } from '@nestjs/common';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { NonRetryableError, OutboxHandlerTimeoutError } from '../errors.js';
import { errorText } from './outbox-arguments.js';
import type { OutboxClaim, OutboxRecord, OutboxStore } from './outbox.interfaces.js';

/** How the relay delivers one write's events of one aggregate; rejects when a handler failed. */
export type OutboxDelivery = (aggregate: string, events: readonly DataSyncEvent[]) => Promise<void>;

/** What one relay has done since it started (for logs and tests). */
export interface OutboxRelayCounters {
  delivered: number;
  /** Failed deliveries, handler timeouts included. */
  failed: number;
  deadLettered: number;
  /** Claims ended early because another relay took them over (a lease ran out). */
  lost: number;
}

/** What a lane needs of its relay. */
export interface OutboxLaneContext {
  readonly owner: string;
  readonly settings: {
    readonly leaseMs: number;
    readonly handlerTimeoutMs: number;
    readonly maxAttempts: number;
    readonly backoff: { readonly initialMs: number; readonly maxMs: number };
    readonly retryIf?: (error: unknown, record: OutboxRecord) => boolean;
  };
  readonly counters: OutboxRelayCounters;
  readonly logger: Logger;
  readonly deliver: OutboxDelivery;
  readonly clock: () => number;
  /** True once the relay is shutting down: a lane ends after the write in progress and gives the rest back. */
  stopping(): boolean;
  /** True once shutdown released every claim: a lane still running (a hung handler) no longer touches the store. */
  closed(): boolean;
}

type Outcome = { ok: true } | { ok: false; error: unknown };

/**
 * One claimed instance being delivered: its writes one at a time, oldest first, each acked
 * before the next starts, stopping at a failure (or a timeout), a lost claim or shutdown.
 *
 * While it runs its lease is renewed every third of `leaseMs`, so a handler slower than the
 * lease keeps the instance: no other relay (and no later claim of this one) gets its events
 * meanwhile, which is what keeps them in order. Should renewals fail (the store unreachable),
 * the lease still runs out: the lane then stops before a write it could not finish under it.
 *
 * The lane's store calls (renew, ack, fail, release) run one after another, so a renewal never
 * crosses an ack and its count tells exactly whether the claim is still this relay's.
 */
export class OutboxLane {
  /** The claimed events not acked yet: what a renewal or a release covers. */
  private readonly remaining: Set<string>;
  private leaseUntil: number;
  /** A renewal found the claim gone (another relay took it over after the lease lapsed). */
  private gone = false;
  private lostCounted = false;
  private ended = false;
  private ops: Promise<unknown> = Promise.resolve();
  private renewal?: NodeJS.Timeout;

  constructor(
    private readonly context: OutboxLaneContext,
    private readonly store: OutboxStore,
    private readonly claim: OutboxClaim,
  ) {
    this.remaining = new Set(claim.events.map((record) => record.eventId));
    this.leaseUntil = claim.leaseUntil;
  }

  async run(): Promise<void> {
    this.scheduleRenewal();
    try {
      for (const write of groupByWrite(this.claim.events)) {
        if (!(await this.mayDeliver(write))) return;
        const outcome = await this.deliver(write);
        if (!outcome.ok) {
          await this.fail(write[0], outcome.error);
          return;
        }
        if (!(await this.ack(write))) return;
      }
    } finally {
      this.ended = true;
      clearTimeout(this.renewal);
    }
  }

  /**
   * This relay claimed the instance again while the lane still runs: its lease had lapsed
   * (renewals failed) and nobody else took it. The lane goes on under the fresh lease; the
   * events written since the first claim go back, to be claimed after the lane ends. Also
   * reached by a write handed off between the lane's last ack and its end. Resolves true when
   * it gave events back.
   */
  async adopt(claim: OutboxClaim): Promise<boolean> {
    const returned = claim.events.map((record) => record.eventId).filter((id) => this.gone || !this.remaining.has(id));
    if (!this.gone) this.leaseUntil = Math.max(this.leaseUntil, claim.leaseUntil);
    if (returned.length === 0) return false;
    await this.serial(() => this.store.release(this.context.owner, returned));
    return true;
  }

  private async mayDeliver(write: readonly OutboxRecord[]): Promise<boolean> {
    if (this.gone) {
      this.lose();
      return false;
    }
    const { leaseMs } = this.context.settings;
    const now = this.context.clock();
    // A renewal keeps leaseUntil two thirds of a lease ahead; this is the margin for when they
    // fail. A write held until later (availableAt) ends the lane: it is the instance's head now,
    // which no claim takes before it is due, and the events after it wait behind it.
    if (
      this.context.stopping() ||
      now >= this.leaseUntil - Math.floor(leaseMs / 5) ||
      write.some((record) => record.nextAttemptAt > now)
    ) {
      await this.serial(async () => {
        await this.store.release(this.context.owner, [...this.remaining]);
        this.remaining.clear();
      });
      return false;
    }
    return true;
  }

  private async deliver(write: readonly OutboxRecord[]): Promise<Outcome> {
    const { handlerTimeoutMs } = this.context.settings;
    const head = write[0];
    let timer: NodeJS.Timeout | undefined;
    const call = Promise.resolve().then(() =>
      this.context.deliver(
        this.claim.aggregate,
        write.map((record) => record.event),
      ),
    );
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new OutboxHandlerTimeoutError(
              `the handlers of ${this.claim.aggregate} ${JSON.stringify(this.claim.aggregateId)} v${head.version} did not settle within handlerTimeoutMs (${handlerTimeoutMs} ms)`,
            ),
          ),
        handlerTimeoutMs,
      );
      // A hung handler must not keep a process alive that has nothing else to do.
      timer.unref();
    });
    try {
      await Promise.race([call, late]);
      return { ok: true };
    } catch (error) {
      return { ok: false, error };
    } finally {
      clearTimeout(timer);
      // A call that outlived its timeout may still reject; it was counted as failed already.
      call.catch(() => undefined);
    }
  }

  private async fail(head: OutboxRecord, error: unknown): Promise<void> {
    const { counters, logger, owner, settings } = this.context;
    const { aggregate, aggregateId } = this.claim;
    counters.failed++;
    const delay = Math.min(settings.backoff.maxMs, settings.backoff.initialMs * 2 ** head.attempts);
    const now = this.context.clock();
    const retry = this.mayRetry(error, head);
    const outcome = await this.serial(async () => {
      const failed = await this.store.fail(owner, head.eventId, {
        error: errorText(error),
        retryAt: now + delay,
        // Not retried: this failure is its last (the store dead-letters once attempts reach it).
        maxAttempts: retry ? settings.maxAttempts : 1,
        now,
      });
      // Every lease of this relay on the instance ended with it: nothing left to renew.
      this.remaining.clear();
      return failed;
    });
    if (outcome === undefined) return; // shut down meanwhile: the claim was released
    if (outcome === null) this.lose();
    else if (outcome.dead) {
      counters.deadLettered++;
      logger.error(
        `Data-sync event ${head.eventId} (${aggregate} ${JSON.stringify(aggregateId)} v${head.version}) failed ${retry ? `${outcome.attempts} times` : 'with an error not to retry'}: ` +
          `it is a dead letter now, until requeued (OutboxRelay.requeueDeadLetters). Last error: ${errorText(error)}`,
      );
    } else {
      logger.warn(
        `Delivering ${aggregate} ${JSON.stringify(aggregateId)} v${head.version} failed (attempt ${outcome.attempts}); retrying in ${delay} ms: ${errorText(error)}`,
      );
    }
  }

  /** False when the failure must not be retried: a NonRetryableError (of any handler), or `retryIf` says so. */
  private mayRetry(error: unknown, head: OutboxRecord): boolean {
    if (isNonRetryable(error)) return false;
    const { retryIf } = this.context.settings;
    if (retryIf === undefined) return true;
    try {
      return retryIf(error, head) !== false;
    } catch (thrown) {
      this.context.logger.warn(`retryIf threw (${errorText(thrown)}); the delivery is retried`);
      return true;
    }
  }

  /** Acks one delivered write; false when the lane must stop (the claim was taken over, or shutdown). */
  private async ack(write: readonly OutboxRecord[]): Promise<boolean> {
    const ids = write.map((record) => record.eventId);
    const acked = await this.serial(async () => {
      const count = await this.store.ack(this.context.owner, ids);
      for (const id of ids) this.remaining.delete(id);
      return count;
    });
    this.context.counters.delivered += write.length;
    if (acked === undefined) return false;
    if (acked < ids.length) {
      // Another relay took the instance over (our lease ran out): it goes on from here.
      this.lose();
      return false;
    }
    return true;
  }

  private scheduleRenewal(): void {
    const every = Math.max(1, Math.floor(this.context.settings.leaseMs / 3));
    this.renewal = setTimeout(() => {
      void this.renew().finally(() => {
        if (!this.ended && !this.gone && !this.context.closed()) this.scheduleRenewal();
      });
    }, every);
    // The lane itself (a handler running) is what keeps the process busy, not its renewals.
    this.renewal.unref();
  }

  private async renew(): Promise<void> {
    const { owner, settings, logger } = this.context;
    try {
      const result = await this.serial(async () => {
        const ids = [...this.remaining];
        if (this.ended || ids.length === 0) return null;
        const leaseUntil = this.context.clock() + settings.leaseMs;
        return { renewed: await this.store.renew(owner, ids, leaseUntil), wanted: ids.length, leaseUntil };
      });
      if (result === undefined || result === null) return;
      if (result.renewed < result.wanted) this.gone = true;
      else this.leaseUntil = Math.max(this.leaseUntil, result.leaseUntil);
    } catch (error) {
      logger.warn(
        `Renewing the lease on ${this.claim.aggregate} ${JSON.stringify(this.claim.aggregateId)} failed (${errorText(error)}); ` +
          'retrying; the lane stops before its next write if the lease runs low',
      );
    }
  }

  /** Runs `op` after the lane's earlier store calls; resolves undefined (without calling) once the relay has shut down. */
  private serial<T>(op: () => Promise<T>): Promise<T | undefined> {
    const next = this.ops.then(() => (this.context.closed() ? undefined : op()));
    this.ops = next.catch(() => undefined);
    return next;
  }

  private lose(): void {
    if (this.lostCounted) return;
    this.lostCounted = true;
    this.context.counters.lost++;
  }
}

/** A NonRetryableError, or several handlers' failures (an AggregateError) of which one is. */
function isNonRetryable(error: unknown): boolean {
  if (error instanceof NonRetryableError) return true;
  return error instanceof AggregateError && error.errors.some(isNonRetryable);
}

/** The events of one claim cut into writes: consecutive events of the same version. */
function groupByWrite(events: readonly OutboxRecord[]): OutboxRecord[][] {
  const writes: OutboxRecord[][] = [];
  for (const event of events) {
    const last = writes[writes.length - 1];
    if (last !== undefined && last[0].version === event.version) last.push(event);
    else writes.push([event]);
  }
  return writes;
}
