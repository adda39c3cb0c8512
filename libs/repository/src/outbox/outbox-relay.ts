import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { RepositoryConfigurationError } from '../errors.js';
import { errorText } from './outbox-arguments.js';
import { OutboxLane, type OutboxDelivery, type OutboxLaneContext, type OutboxRelayCounters } from './outbox-lane.js';
import type {
  OutboxClaim,
  OutboxDeadLetterQuery,
  OutboxLocalRelay,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from './outbox.interfaces.js';

export type { OutboxDelivery, OutboxRelayCounters } from './outbox-lane.js';

export interface OutboxRelaySettings {
  /** The most instances this relay delivers at once (default 50): each round claims up to what is free of it. */
  batchSize?: number;
  /**
   * How long a claim holds before another relay may take it over (default 30 s). The relay
   * renews it every third of `leaseMs` while the instance's handlers run, so a handler may take
   * longer; it bounds how long the events of a relay that died wait for another relay.
   */
  leaseMs?: number;
  /**
   * How long one handler call (one write's events) may run before it counts as failed (default
   * 60 s): it then takes the retry path (a backoff, a dead letter after `maxAttempts`). The late
   * call is not stopped; the retry may overlap it.
   */
  handlerTimeoutMs?: number;
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

/** The methods a relay calls on each store. */
const RELAY_SIDE = ['claim', 'renew', 'ack', 'fail', 'release', 'status'] as const;

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
 * claim at all. `status()` is for health checks.
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
  private readonly lanes = new Map<OutboxStore, Map<string, OutboxLane>>();
  /** Every lane running (their ends), for shutdown to wait on. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly laneContext: OutboxLaneContext;
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
    if (options === null || typeof options !== 'object')
      throw new RepositoryConfigurationError('OutboxRelay: options are required');
    if (!Array.isArray(options.stores) || options.stores.length === 0)
      throw new RepositoryConfigurationError('OutboxRelay: stores must name at least one OutboxStore');
    options.stores.forEach((store: Partial<OutboxStore> | null, i) => {
      const missing = RELAY_SIDE.filter((method) => typeof store?.[method] !== 'function');
      if (missing.length > 0)
        throw new RepositoryConfigurationError(
          `OutboxRelay: stores[${i}] is not an OutboxStore (no ${missing.join(', ')}); a store of your own needs renew since the relay renews leases`,
        );
    });
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
    this.laneContext = {
      owner: this.owner,
      settings: this.settings,
      counters: this.counters,
      logger: this.logger,
      deliver: this.deliverTo,
      clock: this.clock,
      stopping: () => this.stopRequested,
      closed: () => this.released,
    };
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
      const free = this.settings.batchSize - this.active();
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
      const free = this.settings.batchSize - this.active();
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
      for (const claim of claims) lanes.push(this.openLane(store, claim, detached));
    }
    return { claimed, lanes };
  }

  private openLane(store: OutboxStore, claim: OutboxClaim, detached: boolean, handedOff = false): Promise<void> {
    let lanes = this.lanes.get(store);
    if (lanes === undefined) this.lanes.set(store, (lanes = new Map()));
    const key = instanceKey(claim);
    const running = lanes.get(key);
    const wakesBefore = this.wakes;
    // The store hands an instance out again only when the lease lapsed; the lane still running
    // here must stay the only one delivering it.
    const done =
      running !== undefined
        ? // What it gave back was released after the lane's own wake-up (its store calls run in
          // turn): nothing else would claim it before the next poll.
          running.adopt(claim).then((gaveBack) => {
            if (gaveBack) this.wake();
          })
        : (() => {
            const lane = new OutboxLane(this.laneContext, store, claim);
            lanes.set(key, lane);
            return lane.run().finally(() => {
              lanes.delete(key);
              // Its instance may have more now, or lanes were all busy: claim again. A write
              // handed off needs that only when new events were signalled meanwhile (a write
              // to its instance while it ran was stored unclaimed and woke this relay).
              if (!handedOff || this.wakes !== wakesBefore) this.wake();
            });
          })();
    this.inFlight.add(done);
    const tracked = done.finally(() => this.inFlight.delete(done));
    if (!detached) return tracked;
    tracked.catch((error: unknown) =>
      this.logger.error(
        `Delivering ${claim.aggregate} ${JSON.stringify(claim.aggregateId)} stopped on a store error (${errorText(error)}); its claim expires with its lease`,
      ),
    );
    return Promise.resolve();
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
      hasRoom: () => !this.stopRequested && this.active() < this.settings.batchSize,
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
        if (this.onClaimed === undefined) return void this.openLane(store, claim, true, true);
        void Promise.resolve(this.onClaimed([claim])).then(
          () => this.openLane(store, claim, true, true),
          (error: unknown) =>
            this.logger.error(`onClaimed failed (${errorText(error)}); the claim expires with its lease`),
        );
      },
    };
  }

  private active(): number {
    let n = 0;
    for (const lanes of this.lanes.values()) n += lanes.size;
    return n;
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
      await Promise.all([...this.inFlight].map((lane) => lane.catch(() => undefined)));
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

function instanceKey(claim: OutboxClaim): string {
  return `${claim.aggregate}\u0000${typeof claim.aggregateId}\u0000${String(claim.aggregateId)}`;
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
    handlerTimeoutMs: positive(options.handlerTimeoutMs, 'handlerTimeoutMs', 60_000),
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
