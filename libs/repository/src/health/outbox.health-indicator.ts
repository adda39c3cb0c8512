import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { OutboxRelay } from '../outbox/outbox-relay.js';
import type { OutboxStatus } from '../outbox/outbox.interfaces.js';
import { within } from './within.js';

export interface OutboxHealthCheckOptions {
  /**
   * Down when the oldest pending event is older than this (default 60,000 ms). The default is
   * twice the relay's default lease (30 s): an event claimed by a relay that died waits out
   * that lease before another relay takes it over, which must not flap readiness; a backlog
   * older than that means no relay is delivering. Raise it with `leaseMs` or long backoffs.
   */
  maxLagMs?: number;
  /**
   * Down while dead letters exist (default false): a dead letter waits for an operator to
   * requeue or purge it, which no restart and no load balancer fixes, and failing readiness on every
   * instance for one poisoned event would take the whole service out. They are always in
   * the details, for alerting.
   */
  failOnDeadLetters?: boolean;
  /** Down when the stores have not answered `status()` within this many milliseconds (default 1,000). */
  timeoutMs?: number;
  /** The relay to read (default: RepositoryModule's; pass your own when you build one, e.g. for MongoDB). `null`: the outbox is off. */
  relay?: OutboxRelay | null;
}

export const DEFAULT_OUTBOX_MAX_LAG_MS = 60_000;
export const DEFAULT_OUTBOX_HEALTH_TIMEOUT_MS = 1_000;

/**
 * `@nestjs/terminus` indicator of the outbox backlog, from the relay's `status()`: up with
 * `{ pending, oldestPendingAgeMs, deadLetters, oldestDeadLetterAgeMs }` (and `slots`: each replication
 * slot's retained WAL and lag, for PostgresWalOutboxStore); down (same details and a `message`) when the
 * oldest pending event is older than `maxLagMs`, or dead letters exist and `failOnDeadLetters`,
 * or down with a `message` alone when the stores do not answer within `timeoutMs`. Up with
 * `{ enabled: false }` when the outbox is off. Provide it in a module that imports `TerminusModule`.
 */
@Injectable()
export class OutboxHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly health: HealthIndicatorService,
    // Optional: an application may use the indicator with its own relay and no RepositoryModule outbox.
    @Optional() @Inject(OutboxRelay) private readonly relay: OutboxRelay | null = null,
  ) {}

  async isHealthy<const Key extends string = 'outbox'>(
    key: Key = 'outbox' as Key,
    options: OutboxHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const relay = options.relay === undefined ? this.relay : options.relay;
    if (relay === null || relay === undefined) return session.up({ enabled: false });
    const maxLagMs = positive(options.maxLagMs, DEFAULT_OUTBOX_MAX_LAG_MS, 'maxLagMs');
    const timeoutMs = positive(options.timeoutMs, DEFAULT_OUTBOX_HEALTH_TIMEOUT_MS, 'timeoutMs');
    let status: OutboxStatus;
    try {
      status = await within(timeoutMs, relay.status());
    } catch (error) {
      return session.down({ message: `outbox store: ${error instanceof Error ? error.message : String(error)}` });
    }
    const details = {
      pending: status.pending,
      oldestPendingAgeMs: status.oldestPendingAgeMs,
      deadLetters: status.deadLetters,
      oldestDeadLetterAgeMs: status.oldestDeadLetterAgeMs,
      ...(status.slots === undefined ? {} : { slots: status.slots }),
    };
    if (status.oldestPendingAgeMs !== null && status.oldestPendingAgeMs > maxLagMs) {
      return session.down({
        ...details,
        message: `the oldest pending event is ${status.oldestPendingAgeMs} ms old (maxLagMs ${maxLagMs})`,
      });
    }
    if (options.failOnDeadLetters === true && status.deadLetters > 0) {
      return session.down({ ...details, message: `${status.deadLetters} dead letter(s) wait for an operator` });
    }
    return session.up(details);
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`OutboxHealthIndicator: ${name} must be a positive number of milliseconds`);
  return value;
}
