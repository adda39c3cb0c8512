import { RepositoryConfigurationError } from '../errors.js';
import type { OutboxDelivery } from './outbox-lane.js';
import type { OutboxClaim, OutboxRecord, OutboxStore } from './outbox.interfaces.js';

// What an OutboxRelay is configured with, and the checks that refuse what cannot work before it
// starts (RepositoryModule checks its `outbox` options with the same function at bootstrap).

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
  /**
   * Whether a failed delivery is retried: called with the handler's error and the write's first
   * event; false makes that event a dead letter at once. A NonRetryableError is never retried,
   * whatever this says. Default: every other failure is retried (up to `maxAttempts`). A
   * `retryIf` that throws counts as true.
   */
  retryIf?: (error: unknown, record: OutboxRecord) => boolean;
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

/** Throws RepositoryConfigurationError for relay options that cannot work (the settings are checked by validateRelaySettings). */
export function checkRelayOptions(options: OutboxRelayOptions): void {
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
}

export type ValidatedRelaySettings = Required<Omit<OutboxRelaySettings, 'backoff' | 'onClaimed' | 'retryIf'>> & {
  backoff: { initialMs: number; maxMs: number };
  retryIf: OutboxRelaySettings['retryIf'];
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
  if (options.retryIf !== undefined && typeof options.retryIf !== 'function')
    throw new RepositoryConfigurationError('outbox: retryIf must be a function (error, record) => boolean');
  if (options.backoff !== undefined && (options.backoff === null || typeof options.backoff !== 'object'))
    throw new RepositoryConfigurationError('outbox: backoff must be an object { initialMs?, maxMs? }');
  const settings = {
    batchSize: positive(options.batchSize, 'batchSize', 50),
    leaseMs: positive(options.leaseMs, 'leaseMs', 30_000),
    handlerTimeoutMs: positive(options.handlerTimeoutMs, 'handlerTimeoutMs', 60_000),
    pollIntervalMs: positive(options.pollIntervalMs, 'pollIntervalMs', 1_000),
    maxAttempts: positive(options.maxAttempts, 'maxAttempts', 10),
    shutdownTimeoutMs: positive(options.shutdownTimeoutMs, 'shutdownTimeoutMs', 10_000),
    retryIf: options.retryIf,
    backoff: {
      initialMs: positive(options.backoff?.initialMs, 'backoff.initialMs', 1_000),
      maxMs: positive(options.backoff?.maxMs, 'backoff.maxMs', 300_000),
    },
  };
  if (settings.leaseMs < 5) throw new RepositoryConfigurationError('outbox: leaseMs must be at least 5');
  return settings;
}
