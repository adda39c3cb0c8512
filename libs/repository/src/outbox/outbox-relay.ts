import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { RepositoryConfigurationError } from '../errors.js';
import { checkDeadLetterFilter, errorText } from './outbox-arguments.js';
import type { OutboxDelivery, OutboxLaneContext, OutboxRelayCounters } from './outbox-lane.js';
import { OutboxLanes } from './outbox-relay.lanes.js';
import {
  checkRelayOptions,
  validateRelaySettings,
  type OutboxRelayOptions,
  type OutboxRelaySettings,
  type ValidatedRelaySettings,
} from './outbox-relay.settings.js';
import type {
  OutboxDeadLetterFilter,
  OutboxDeadLetterQuery,
  OutboxLocalRelay,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from './outbox.interfaces.js';

export type { OutboxDelivery, OutboxRelayCounters } from './outbox-lane.js';
export type { OutboxRelayOptions, OutboxRelaySettings } from './outbox-relay.settings.js';

/**
 * Delivers the events stored by writes (the outbox) to the data-sync handlers, at least once,
 * in version order per aggregate instance. Any number of relays, in any number of processes,
 * may run against one store.
 *
 * Each claimed instance gets a lane of its own: its events are delivered oldest first (one
 * write's events per handler call), each write acked before the next, stopping at the first
 * failure (`fail`: retried after a backoff that doubles, a dead letter after `maxAttempts`) or
 * timeout (`handlerTimeoutMs`). Its lease is renewed while it runs, so no other claim gets the
 * instance meanwhile. Lanes run side by side, up to `batchSize`, and the relay goes on claiming
 * while they run: a slow handler holds up its own instance only. A relay that dies leaves its
 * claims to expire; one that shuts down finishes the writes in progress and releases the rest.
 *
 * It claims when the store tells it of new events (PostgreSQL LISTEN/NOTIFY, in process), when
 * a lane ends (its instance may have more), and every `pollIntervalMs` regardless. A store that
 * can (PostgreSQL) hands it the writes of its own process as they commit, already claimed for
 * it, whenever their instance had nothing pending (OutboxStore.attachRelay): those need no
 * claim at all. `status()` is for health checks; dead letters are listed, requeued and purged here.
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
  private readonly lanes: OutboxLanes;
  private running?: Promise<void>;
  private stopping?: Promise<void>;
  private stopRequested = false;
  private claimedAny = false;
  private released = false;
  private unwatch: Array<() => Promise<void>> = [];
  private detach: Array<() => void> = [];
  private wakeUp?: () => void;
  private signalled = false;
  /** Wake-ups so far: a lane compares it at its end with what it was at its start. */
  private wakes = 0;

  constructor(options: OutboxRelayOptions) {
    checkRelayOptions(options);
    this.stores = options.stores;
    this.deliverTo = options.deliver;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    if (typeof this.owner !== 'string' || this.owner.length === 0)
      throw new RepositoryConfigurationError('OutboxRelay: owner must be a non-empty string');
    this.clock = options.clock ?? Date.now;
    this.autoStart = options.autoStart ?? true;
    this.settings = validateRelaySettings(options);
    this.onClaimed = options.onClaimed;
    const laneContext: OutboxLaneContext = {
      owner: this.owner,
      settings: this.settings,
      counters: this.counters,
      logger: this.logger,
      deliver: this.deliverTo,
      clock: this.clock,
      stopping: () => this.stopRequested,
      closed: () => this.released,
    };
    this.lanes = new OutboxLanes(laneContext, {
      logger: this.logger,
      wake: () => this.wake(),
      wakes: () => this.wakes,
    });
  }

  /** Starts relaying (RepositoryModule calls it on bootstrap); a no-op when running. */
  async start(): Promise<void> {
    if (this.running !== undefined) return;
    if (this.stopRequested)
      throw new RepositoryConfigurationError('OutboxRelay: a stopped relay does not start again; create another');
    for (const store of this.stores) {
      if (store.attachRelay !== undefined) this.detach.push(store.attachRelay(this.localRelay(store)));
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
   * One round: claims a batch from every store and delivers it, resolving once those
   * deliveries ended. Resolves the number of instances claimed (0: nothing was due). The
   * running loop does not wait so (it claims on while lanes run); a test or a script that
   * relays without the loop calls this.
   */
  async runOnce(): Promise<number> {
    const { claimed, lanes } = await this.claimRound(false);
    await Promise.all(lanes);
    return claimed;
  }

  /** Runs rounds until one claims nothing (tests, scripts). Resolves the instances claimed in all. */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  /** Pending events and dead letters, and the oldest of each's age, over every store: for health checks. */
  async status(): Promise<OutboxStatus> {
    const now = this.clock();
    const all = await Promise.all(this.stores.map((store) => store.status(now)));
    const oldest = (ages: Array<number | null>): number | null => {
      const known = ages.filter((age): age is number => age !== null);
      return known.length === 0 ? null : Math.max(...known);
    };
    return {
      pending: all.reduce((sum, s) => sum + s.pending, 0),
      oldestPendingAgeMs: oldest(all.map((s) => s.oldestPendingAgeMs)),
      deadLetters: all.reduce((sum, s) => sum + s.deadLetters, 0),
      oldestDeadLetterAgeMs: oldest(all.map((s) => s.oldestDeadLetterAgeMs)),
      ...(all.some((s) => s.slots !== undefined) ? { slots: all.flatMap((s) => s.slots ?? []) } : {}),
    };
  }

  /** Dead letters of every store matching the query, oldest first (see OutboxStore.listDeadLetters). */
  async listDeadLetters(query: OutboxDeadLetterQuery = {}): Promise<OutboxRecord[]> {
    const lists = await Promise.all(this.stores.map((store) => store.listDeadLetters(query)));
    const merged = lists
      .flat()
      .sort((a, b) => a.deadAt! - b.deadAt! || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    return merged.slice(0, query.limit ?? 100);
  }

  /**
   * Makes the dead letters matching `filter` (`{}`: all) pending again, attempts from 0, in every
   * store; resolves how many. A filter a store refuses is refused before any store changes.
   */
  async requeueDeadLetters(filter: OutboxDeadLetterFilter): Promise<number> {
    checkDeadLetterFilter(filter);
    const now = this.clock();
    const counts = await Promise.all(this.stores.map((store) => store.requeueDeadLetters(filter, now)));
    this.wake();
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Deletes the dead letters matching `filter` (`{}`: all) from every store; resolves how many. */
  async purgeDeadLetters(filter: OutboxDeadLetterFilter): Promise<number> {
    checkDeadLetterFilter(filter);
    const counts = await Promise.all(this.stores.map((store) => store.purgeDeadLetters(filter)));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** `requeueDeadLetters({ eventIds })`. */
  replayDeadLetters(eventIds: readonly string[]): Promise<number> {
    return this.requeueDeadLetters({ eventIds });
  }

  // ---------------------------------------------------------------- internals

  private async loop(): Promise<void> {
    let errors = 0;
    while (!this.stopRequested) {
      let claimed = 0;
      this.signalled = false;
      try {
        claimed = (await this.claimRound(true)).claimed;
        errors = 0;
      } catch (error) {
        errors++;
        this.logger.error(
          `An outbox round failed (${errors} in a row); retrying`,
          error instanceof Error ? error.stack : String(error),
        );
      }
      if (this.stopRequested) break;
      const free = this.settings.batchSize - this.lanes.active;
      // More may be due at once after a round that claimed, after a notification or the end of
      // a lane during it; with every lane busy, the end of one wakes the loop.
      if (errors === 0 && free > 0 && (claimed > 0 || this.signalled)) continue;
      await this.sleep(
        errors === 0
          ? this.settings.pollIntervalMs
          : Math.min(this.settings.pollIntervalMs * 2 ** Math.min(errors, 6), 60_000),
      );
    }
  }

  /**
   * Claims from every store, up to the lanes free, and opens a lane per claimed instance.
   * `detached`: the loop's lanes log their own errors; runOnce's reject to its caller.
   */
  private async claimRound(detached: boolean): Promise<{ claimed: number; lanes: Promise<void>[] }> {
    this.claimedAny = true; // before the claim: a claim whose reply was lost holds rows too
    let claimed = 0;
    const lanes: Promise<void>[] = [];
    for (const store of this.stores) {
      const free = this.settings.batchSize - this.lanes.active;
      if (this.stopRequested || free <= 0) break;
      const claims = await store.claim({
        owner: this.owner,
        limit: free,
        leaseMs: this.settings.leaseMs,
        now: this.clock(),
      });
      claimed += claims.length;
      if (claims.length === 0) continue;
      if (this.onClaimed !== undefined) await this.onClaimed(claims);
      for (const claim of claims) lanes.push(this.lanes.open(store, claim, detached));
    }
    return { claimed, lanes };
  }

  /**
   * This relay as `store` hands it the writes of this process (OutboxStore.attachRelay): their
   * events arrive claimed, once committed, and get a lane like a claim of the loop's.
   */
  private localRelay(store: OutboxStore): OutboxLocalRelay {
    return {
      owner: this.owner,
      leaseMs: this.settings.leaseMs,
      now: () => this.clock(),
      hasRoom: () => !this.stopRequested && this.lanes.active < this.settings.batchSize,
      take: (claim) => {
        this.claimedAny = true;
        if (this.stopRequested) {
          // A write that began before the stop committed after it: give its events back now.
          const ids = claim.events.map((record) => record.eventId);
          store
            .release(this.owner, ids)
            .catch((error: unknown) =>
              this.logger.warn(`Releasing a write's events failed (${errorText(error)}); they wait for their lease`),
            );
          return;
        }
        if (this.onClaimed === undefined) return void this.lanes.open(store, claim, true, true);
        void Promise.resolve(this.onClaimed([claim])).then(
          () => this.lanes.open(store, claim, true, true),
          (error: unknown) =>
            this.logger.error(`onClaimed failed (${errorText(error)}); the claim expires with its lease`),
        );
      },
    };
  }

  private wake(): void {
    this.wakes++;
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
    for (const detach of this.detach.splice(0)) detach();
    this.wakeUp?.();
    const unwatch = this.unwatch;
    this.unwatch = [];
    await Promise.all(unwatch.map((stop) => stop().catch(() => undefined)));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(() => resolve('late'), this.settings.shutdownTimeoutMs)),
    );
    const finished = (async () => {
      await this.running;
      // The loop has stopped claiming: the lanes open now are all there will be.
      await this.lanes.ended();
      return 'done' as const;
    })();
    const outcome = await Promise.race([finished, late]);
    clearTimeout(timer);
    if (outcome === 'late')
      this.logger.warn(`Deliveries still running after ${this.settings.shutdownTimeoutMs} ms; releasing their claims`);
    // From here a lane still running (a handler that outlived the wait) calls no store: the
    // application may close its pools right after.
    this.released = true;
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
