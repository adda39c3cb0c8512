import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { RepositoryConfigurationError } from '../errors/repository-configuration.error.js';
import { errorText } from './outbox-arguments.js';
import type {
  OutboxClaim,
  OutboxDeadLetterQuery,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from './outbox.interfaces.js';

/** How the relay delivers one write's events of one aggregate; rejects when a handler failed. */
export type OutboxDelivery = (aggregate: string, events: readonly DataSyncEvent[]) => Promise<void>;

export interface OutboxRelaySettings {
  /** Instances claimed per round (default 50). */
  batchSize?: number;
  /** How long a claim holds before another relay may take it over (default 30 s); keep it well above a handler's run time. */
  leaseMs?: number;
  /** The polling interval when nothing wakes the relay (default 1 s). */
  pollIntervalMs?: number;
  /** Failed deliveries after which an event becomes a dead letter (default 10). */
  maxAttempts?: number;
  /** Retry delays: `initialMs` (default 1 s) doubling per failed attempt up to `maxMs` (default 5 min). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How long shutdown waits for deliveries in progress before releasing what is left (default 10 s). */
  shutdownTimeoutMs?: number;
  /**
   * Called with each batch the relay claimed from a store, before any of it is delivered; the
   * deliveries wait for it. A test seam: a crash test parks the relay here (a promise that never
   * settles) to stop it between a claim and the handlers.
   */
  onClaimed?: (claims: readonly OutboxClaim[]) => void | Promise<void>;
}

export interface OutboxRelayOptions extends OutboxRelaySettings {
  /** The stores to relay from (one per backend in use). */
  stores: readonly OutboxStore[];
  /** Where events go: DataSyncEventBus.deliver for the `@OnDataSync` handlers. */
  deliver: OutboxDelivery;
  /** This relay's name in claims (default `host:pid:random`): unique per process. */
  owner?: string;
  /** Start on application bootstrap (default true). */
  autoStart?: boolean;
  /** The clock (epoch ms); tests inject one. */
  clock?: () => number;
}

/** What one relay has done since it started (for logs and tests). */
export interface OutboxRelayCounters {
  delivered: number;
  failed: number;
  deadLettered: number;
  /** Claims ended early because another relay took them over (a lease ran out). */
  lost: number;
}

/**
 * Delivers the events stored by writes (the outbox) to the data-sync handlers, at least once,
 * in version order per aggregate instance. Any number of relays, in any number of processes,
 * may run against one store: each claims a batch of instances with a lease, delivers each
 * instance's events oldest first (one write's events per handler call), acks what the handlers
 * took and stops at an instance's first failure (`fail`: retried after a backoff that doubles,
 * a dead letter after `maxAttempts`). A relay that dies leaves its claims to expire; one that
 * shuts down finishes the write in progress and releases the rest.
 *
 * It wakes on new events when the store can tell (PostgreSQL LISTEN/NOTIFY, in process) and
 * polls every `pollIntervalMs` regardless. `status()` is for health checks.
 */
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  readonly owner: string;
  readonly counters: OutboxRelayCounters = { delivered: 0, failed: 0, deadLettered: 0, lost: 0 };
  private readonly logger = new Logger('OutboxRelay');
  private readonly stores: readonly OutboxStore[];
  private readonly deliverTo: OutboxDelivery;
  private readonly clock: () => number;
  private readonly settings: ValidatedRelaySettings;
  private readonly onClaimed: OutboxRelaySettings['onClaimed'];
  private readonly autoStart: boolean;
  private running?: Promise<void>;
  private stopping?: Promise<void>;
  private stopRequested = false;
  private claimedAny = false;
  private unwatch: Array<() => Promise<void>> = [];
  private wakeUp?: () => void;
  private signalled = false;
  private round?: Promise<number>;

  constructor(options: OutboxRelayOptions) {
    if (options === null || typeof options !== 'object')
      throw new RepositoryConfigurationError('OutboxRelay: options are required');
    if (!Array.isArray(options.stores) || options.stores.length === 0)
      throw new RepositoryConfigurationError('OutboxRelay: stores must name at least one OutboxStore');
    if (typeof options.deliver !== 'function')
      throw new RepositoryConfigurationError('OutboxRelay: deliver must be a function');
    this.stores = options.stores;
    this.deliverTo = options.deliver;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    if (typeof this.owner !== 'string' || this.owner.length === 0)
      throw new RepositoryConfigurationError('OutboxRelay: owner must be a non-empty string');
    this.clock = options.clock ?? Date.now;
    this.autoStart = options.autoStart ?? true;
    this.settings = validateRelaySettings(options);
    this.onClaimed = options.onClaimed;
  }

  /** Starts relaying (RepositoryModule calls it on bootstrap); a no-op when running. */
  async start(): Promise<void> {
    if (this.running !== undefined) return;
    if (this.stopRequested)
      throw new RepositoryConfigurationError('OutboxRelay: a stopped relay does not start again; create another');
    for (const store of this.stores) {
      if (store.watch === undefined) continue;
      try {
        this.unwatch.push(await store.watch(() => this.wake()));
      } catch (error) {
        this.logger.warn(
          `Cannot watch ${store.constructor.name} for new events (${errorText(error)}); polling every ${this.settings.pollIntervalMs} ms`,
        );
      }
    }
    this.running = this.loop();
  }

  /**
   * Stops claiming, lets the writes being delivered finish (up to `shutdownTimeoutMs`), then
   * releases every claim left, so other relays take them over at once. Idempotent.
   */
  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.autoStart) await this.start();
  }

  /**
   * Stops before the shutdown hooks run: a pool or connection the application closes in its
   * own onApplicationShutdown is still open for the release of the claims.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /**
   * One round: claims a batch from every store and delivers it. Resolves the number of
   * instances claimed (0: nothing was due). The running loop calls it; so can a test or a
   * script that relays without the loop.
   */
  async runOnce(): Promise<number> {
    this.claimedAny = true; // before the claim: a claim whose reply was lost holds rows too
    let claimed = 0;
    for (const store of this.stores) {
      if (this.stopRequested) break;
      const claims = await store.claim({
        owner: this.owner,
        limit: this.settings.batchSize,
        leaseMs: this.settings.leaseMs,
        now: this.clock(),
      });
      claimed += claims.length;
      if (claims.length === 0) continue;
      if (this.onClaimed !== undefined) await this.onClaimed(claims);
      await Promise.all(claims.map((claim) => this.deliverClaim(store, claim)));
    }
    return claimed;
  }

  /** Runs rounds until one claims nothing (tests, scripts). Resolves the instances claimed in all. */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  /** Pending events, the oldest pending event's age and dead letters, over every store: for health checks. */
  async status(): Promise<OutboxStatus> {
    const now = this.clock();
    const all = await Promise.all(this.stores.map((store) => store.status(now)));
    const ages = all.map((s) => s.oldestPendingAgeMs).filter((age): age is number => age !== null);
    return {
      pending: all.reduce((sum, s) => sum + s.pending, 0),
      oldestPendingAgeMs: ages.length === 0 ? null : Math.max(...ages),
      deadLetters: all.reduce((sum, s) => sum + s.deadLetters, 0),
    };
  }

  /** Dead letters of every store, oldest first (see OutboxStore.listDeadLetters). */
  async listDeadLetters(query: OutboxDeadLetterQuery = {}): Promise<OutboxRecord[]> {
    const lists = await Promise.all(this.stores.map((store) => store.listDeadLetters(query)));
    const merged = lists
      .flat()
      .sort((a, b) => a.deadAt! - b.deadAt! || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    return merged.slice(0, query.limit ?? 100);
  }

  /** Makes these dead letters pending again (attempts from 0), in whichever store holds them; resolves how many. */
  async replayDeadLetters(eventIds: readonly string[]): Promise<number> {
    const now = this.clock();
    const counts = await Promise.all(this.stores.map((store) => store.replayDeadLetters(eventIds, now)));
    this.wake();
    return counts.reduce((a, b) => a + b, 0);
  }

  // ---------------------------------------------------------------- internals

  private async loop(): Promise<void> {
    let errors = 0;
    while (!this.stopRequested) {
      let claimed = 0;
      this.signalled = false;
      try {
        this.round = this.runOnce();
        claimed = await this.round;
        errors = 0;
      } catch (error) {
        errors++;
        this.logger.error(
          `An outbox round failed (${errors} in a row); retrying`,
          error instanceof Error ? error.stack : String(error),
        );
      } finally {
        this.round = undefined;
      }
      if (this.stopRequested) break;
      // More may be due at once after a full round, or after a notification during it.
      if (claimed > 0 && errors === 0) continue;
      if (this.signalled && errors === 0) continue;
      await this.sleep(
        errors === 0
          ? this.settings.pollIntervalMs
          : Math.min(this.settings.pollIntervalMs * 2 ** Math.min(errors, 6), 60_000),
      );
    }
  }

  /** Delivers one claimed instance, one write at a time, stopping at a failure, a lost lease or shutdown. */
  private async deliverClaim(store: OutboxStore, claim: OutboxClaim): Promise<void> {
    const writes = groupByWrite(claim.events);
    // Stop early enough that the lease cannot run out under a handler.
    const deadline = claim.leaseUntil - Math.floor(this.settings.leaseMs / 5);
    for (let i = 0; i < writes.length; i++) {
      const write = writes[i];
      if (this.stopRequested || this.clock() >= deadline) {
        await store.release(
          this.owner,
          writes
            .slice(i)
            .flat()
            .map((r) => r.eventId),
        );
        return;
      }
      try {
        await this.deliverTo(
          claim.aggregate,
          write.map((record) => record.event),
        );
      } catch (error) {
        this.counters.failed++;
        const head = write[0];
        const delay = Math.min(this.settings.backoff.maxMs, this.settings.backoff.initialMs * 2 ** head.attempts);
        const now = this.clock();
        const outcome = await store.fail(this.owner, head.eventId, {
          error: errorText(error),
          retryAt: now + delay,
          maxAttempts: this.settings.maxAttempts,
          now,
        });
        if (outcome === null) this.counters.lost++;
        else if (outcome.dead) {
          this.counters.deadLettered++;
          this.logger.error(
            `Data-sync event ${head.eventId} (${claim.aggregate} ${JSON.stringify(claim.aggregateId)} v${head.version}) failed ${outcome.attempts} times: ` +
              `it is a dead letter now, until replayed (OutboxRelay.replayDeadLetters). Last error: ${errorText(error)}`,
          );
        } else {
          this.logger.warn(
            `Delivering ${claim.aggregate} ${JSON.stringify(claim.aggregateId)} v${head.version} failed (attempt ${outcome.attempts}); retrying in ${delay} ms: ${errorText(error)}`,
          );
        }
        return;
      }
      const acked = await store.ack(
        this.owner,
        write.map((record) => record.eventId),
      );
      this.counters.delivered += write.length;
      if (acked < write.length) {
        // Another relay took the instance over (our lease ran out): it goes on from here.
        this.counters.lost++;
        return;
      }
    }
  }

  private wake(): void {
    this.signalled = true;
    this.wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }

  private async shutdown(): Promise<void> {
    this.stopRequested = true;
    this.wakeUp?.();
    const unwatch = this.unwatch;
    this.unwatch = [];
    await Promise.all(unwatch.map((stop) => stop().catch(() => undefined)));
    if (this.running !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>(
        (resolve) => (timer = setTimeout(() => resolve('late'), this.settings.shutdownTimeoutMs)),
      );
      const outcome = await Promise.race([this.running.then(() => 'done' as const), late]);
      clearTimeout(timer);
      if (outcome === 'late')
        this.logger.warn(
          `Deliveries still running after ${this.settings.shutdownTimeoutMs} ms; releasing their claims`,
        );
    }
    // A relay that never claimed holds nothing (and its tables may not even exist: `npm run schema`).
    if (!this.claimedAny) return;
    // Whatever this relay still holds (a round cut short, a handler that outlived the wait) goes back now.
    await Promise.all(
      this.stores.map((store) =>
        store
          .release(this.owner)
          .catch((error: unknown) =>
            this.logger.warn(`Releasing claims failed (${errorText(error)}); they expire with their lease`),
          ),
      ),
    );
  }
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

type ValidatedRelaySettings = Required<Omit<OutboxRelaySettings, 'backoff' | 'onClaimed'>> & {
  backoff: { initialMs: number; maxMs: number };
};

export function validateRelaySettings(options: OutboxRelaySettings): ValidatedRelaySettings {
  const positive = (value: unknown, name: string, fallback: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
      throw new RepositoryConfigurationError(`outbox: ${name} must be a positive integer, got ${String(value)}`);
    return value;
  };
  if (options.onClaimed !== undefined && typeof options.onClaimed !== 'function')
    throw new RepositoryConfigurationError('outbox: onClaimed must be a function');
  if (options.backoff !== undefined && (options.backoff === null || typeof options.backoff !== 'object'))
    throw new RepositoryConfigurationError('outbox: backoff must be an object { initialMs?, maxMs? }');
  const settings = {
    batchSize: positive(options.batchSize, 'batchSize', 50),
    leaseMs: positive(options.leaseMs, 'leaseMs', 30_000),
    pollIntervalMs: positive(options.pollIntervalMs, 'pollIntervalMs', 1_000),
    maxAttempts: positive(options.maxAttempts, 'maxAttempts', 10),
    shutdownTimeoutMs: positive(options.shutdownTimeoutMs, 'shutdownTimeoutMs', 10_000),
    backoff: {
      initialMs: positive(options.backoff?.initialMs, 'backoff.initialMs', 1_000),
      maxMs: positive(options.backoff?.maxMs, 'backoff.maxMs', 300_000),
    },
  };
  if (settings.leaseMs < 5) throw new RepositoryConfigurationError('outbox: leaseMs must be at least 5');
  return settings;
}
