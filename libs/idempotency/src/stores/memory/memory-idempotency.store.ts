import type { IdempotencyOutcome, IdempotencyRequest, IdempotencyStore } from '../../idempotency.interfaces.js';
import { assertDuration, checkRequest, DEFAULT_LEASE_MS, DEFAULT_TTL_MS } from '../../idempotency.validation.js';
import { runLeased, type BeginOutcome, type LeasedRecords } from '../../leased-run.js';

export interface MemoryIdempotencyStoreOptions {
  /** How long a result is replayed when a request says nothing; default 24 hours. */
  ttlMs?: number;
  /** How long a key stays in progress when its outcome is unknown; default 60,000 ms. */
  leaseMs?: number;
}

interface MemoryRecord {
  state: 'pending' | 'done';
  fingerprint: string;
  token: string;
  result?: string;
  expiresAt: number;
}

const PRUNE_EVERY = 1_000;

/**
 * The embedded default: one process, nothing persisted. Each state change is synchronous on
 * one Map, so concurrent runs of one key in this process see one another. Expired records are
 * dropped as they are met and every thousand runs.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, MemoryRecord>();
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private runs = 0;
  private readonly leased: LeasedRecords = {
    begin: async (key, fingerprint, token, leaseMs) => this.begin(key, fingerprint, token, leaseMs),
    complete: async (key, token, result, ttlMs) => {
      const record = this.live(key);
      if (record === undefined || record.token !== token) return false;
      Object.assign(record, { state: 'done', result, expiresAt: Date.now() + ttlMs });
      return true;
    },
    release: async (key, token) => {
      const record = this.live(key);
      if (record?.state === 'pending' && record.token === token) this.records.delete(key);
    },
  };

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const { ttlMs = DEFAULT_TTL_MS, leaseMs = DEFAULT_LEASE_MS } = options ?? {};
    assertDuration(ttlMs, 'MemoryIdempotencyStore: ttlMs');
    assertDuration(leaseMs, 'MemoryIdempotencyStore: leaseMs');
    this.ttlMs = ttlMs;
    this.leaseMs = leaseMs;
  }

  async run<R>(request: IdempotencyRequest, work: () => Promise<R>): Promise<IdempotencyOutcome<R>> {
    const { ttlMs } = checkRequest(request, work, this.ttlMs);
    if (++this.runs % PRUNE_EVERY === 0) this.prune();
    return runLeased(this.leased, request, work, { ttlMs, leaseMs: this.leaseMs });
  }

  /** The number of records held (expired ones not yet dropped included). */
  get size(): number {
    return this.records.size;
  }

  private begin(key: string, fingerprint: string, token: string, leaseMs: number): BeginOutcome {
    const record = this.live(key);
    if (record === undefined) {
      this.records.set(key, { state: 'pending', fingerprint, token, expiresAt: Date.now() + leaseMs });
      return { state: 'acquired' };
    }
    if (record.fingerprint !== fingerprint) return { state: 'conflict' };
    if (record.state === 'pending') return record.token === token ? { state: 'acquired' } : { state: 'in-progress' };
    return { state: 'done', result: record.result! };
  }

  private live(key: string): MemoryRecord | undefined {
    const record = this.records.get(key);
    if (record !== undefined && record.expiresAt <= Date.now()) {
      this.records.delete(key);
      return undefined;
    }
    return record;
  }

  private prune(): void {
    const now = Date.now();
    for (const [key, record] of this.records) if (record.expiresAt <= now) this.records.delete(key);
  }
}
