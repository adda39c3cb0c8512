import type { Cluster, Redis } from 'ioredis';
import { IdGeneratorError, IdGeneratorOptionsError, SegmentExhaustedError } from '../errors.js';
import type { AsyncIdGenerator } from '../id-generator.interfaces.js';
import { RedisSegmentSource, type SegmentSource } from './segment/segment-source.js';

export interface SegmentIdOptions {
  /** ioredis client (single node or Cluster), owned by the caller: blocks from `INCRBY key`. Give this or `source`. */
  redis?: Redis | Cluster;
  /** Where blocks come from, e.g. `new PostgresSegmentSource(pool)`. Give this or `redis`. */
  source?: SegmentSource;
  /** The name of the sequence (the Redis key, the PostgreSQL row); one per ID sequence. */
  key: string;
  /** Numbers reserved per block; default 1,000. */
  segmentSize?: number;
  /** Segments kept reserved ahead of the one in use; default 2. */
  prefetchSegments?: number;
}

interface Segment {
  /** Last number handed out before the segment's first (start - 1). */
  from: number;
  /** Last number of the segment. */
  to: number;
}

const CHUNK = 10_000;
const SMALL: string[] = Array.from({ length: CHUNK }, (_, i) => String(i));
const PADDED: string[] = Array.from({ length: CHUNK }, (_, i) => String(i).padStart(4, '0'));

/**
 * Sequential numbers in blocks ("segments") reserved from a SegmentSource: Redis
 * `INCRBY key segmentSize`, or a PostgreSQL row (PostgresSegmentSource); the reply `n` reserves
 * `(n - segmentSize, n]` to this process alone. Segments are fetched ahead of demand
 * (`prefetchSegments` beyond the current one, refilled as each is entered; requested one at a
 * time from a source whose replies may arrive out of order), so a warm `generate()` is a
 * counter increment with no I/O. Numbers left unused when the process stops are skipped
 * (gaps), never reissued. A block that does not lie above the last one received (the store's
 * mark moved back: a failover that lost writes, a restore from a backup) is refused with an
 * error rather than handed out again.
 *
 * `generate()` is synchronous and throws SegmentExhaustedError when prefetching fell behind;
 * `generateAsync()` waits for the next segment instead. Call `ready()` before the first
 * synchronous use. Uniqueness rests on the mark never going backwards: Redis must persist it
 * (AOF with fsync) and must never lose acknowledged writes on failover.
 */
export class SegmentId implements AsyncIdGenerator {
  readonly key: string;
  readonly segmentSize: number;
  readonly prefetchSegments: number;
  private readonly source: SegmentSource;
  private readonly queue: Segment[] = [];
  private inFlight = 0;
  private closed = false;
  private lastError: unknown;
  private waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  /** Numbers left in the current segment. */
  private remaining = 0;
  /** The last number handed out, as high * 10,000 + low (keeps string building cheap). */
  private high = 0;
  private low = 0;
  private highText = '';
  /** The mark of the last block received: every later block must lie above it. */
  private lastMark = 0;

  constructor(options: SegmentIdOptions) {
    if (!options || (options.redis === undefined) === (options.source === undefined)) {
      throw new IdGeneratorOptionsError(
        'SegmentId needs one source of blocks: redis (an ioredis client) or source (e.g. new PostgresSegmentSource(pool))',
      );
    }
    if (options.source !== undefined && typeof options.source.reserve !== 'function') {
      throw new IdGeneratorOptionsError('SegmentId: source must have reserve(key, size)');
    }
    if (typeof options.key !== 'string' || options.key.length === 0 || options.key.length > 1024) {
      throw new IdGeneratorOptionsError('SegmentId needs a key: a non-empty string of at most 1,024 characters');
    }
    const size = options.segmentSize ?? 1_000;
    if (!Number.isSafeInteger(size) || size < 1)
      throw new IdGeneratorOptionsError(`segmentSize must be a positive integer, got ${String(size)}`);
    const prefetch = options.prefetchSegments ?? 2;
    if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > 1_000) {
      throw new IdGeneratorOptionsError(`prefetchSegments must be an integer in [1, 1000], got ${String(prefetch)}`);
    }
    this.source = options.source ?? new RedisSegmentSource(options.redis!);
    this.key = options.key;
    this.segmentSize = size;
    this.prefetchSegments = prefetch;
  }

  /** Resolves once a segment is in hand (and prefetching has started); rejects when Redis fails. */
  async ready(): Promise<this> {
    if (this.remaining > 0 || this.queue.length > 0) return this;
    await this.awaitSegment();
    return this;
  }

  generate(): string {
    this.advance();
    return this.high === 0 ? SMALL[this.low] : this.highText + PADDED[this.low];
  }

  generateNumber(): number {
    this.advance();
    return this.high * CHUNK + this.low;
  }

  async generateAsync(): Promise<string> {
    while (this.remaining === 0 && this.queue.length === 0) await this.awaitSegment();
    return this.generate();
  }

  /** Stops prefetching; numbers already reserved and unused are skipped. */
  close(): void {
    this.closed = true;
    const error = new IdGeneratorError(`SegmentId "${this.key}" is closed`);
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  private advance(): void {
    if (this.remaining === 0) this.enterNextSegment();
    this.remaining--;
    if (++this.low === CHUNK) {
      this.low = 0;
      this.highText = String(++this.high);
    }
  }

  private enterNextSegment(): void {
    const segment = this.queue.shift();
    this.refill();
    if (!segment) throw new SegmentExhaustedError(this.key, this.lastError);
    this.remaining = segment.to - segment.from;
    this.low = segment.from % CHUNK;
    this.high = (segment.from - this.low) / CHUNK;
    this.highText = String(this.high);
  }

  private awaitSegment(): Promise<void> {
    if (this.closed) return Promise.reject(new IdGeneratorError(`SegmentId "${this.key}" is closed`));
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.refill();
    });
  }

  /**
   * Keeps `prefetchSegments` segments reserved or on their way: all requested at once from a
   * source whose replies arrive in order (Redis), one at a time from one whose replies may not
   * (several pooled connections), so that segments always queue in ascending order.
   */
  private refill(): void {
    const concurrency = this.source.ordered === true ? this.prefetchSegments : 1;
    while (!this.closed && this.inFlight < concurrency && this.queue.length + this.inFlight < this.prefetchSegments) {
      this.inFlight++;
      this.source.reserve(this.key, this.segmentSize).then(
        (to) => {
          if (this.onSegment(Number(to))) this.refill();
        },
        (error: unknown) => this.onFailure(error),
      );
    }
  }

  /** False when the reply cannot be used (then nothing more is fetched until asked). */
  private onSegment(to: number): boolean {
    this.inFlight--;
    if (!Number.isSafeInteger(to) || to > Number.MAX_SAFE_INTEGER || to < this.segmentSize) {
      this.onFailure(
        new IdGeneratorError(
          `SegmentId "${this.key}": the source answered ${String(to)}, not a mark past ${this.segmentSize} below Number.MAX_SAFE_INTEGER; use a new key`,
        ),
        false,
      );
      return false;
    }
    if (to - this.segmentSize < this.lastMark) {
      this.onFailure(
        new IdGeneratorError(
          `SegmentId "${this.key}": the source handed out the block (${to - this.segmentSize}, ${to}], which does not lie above ` +
            `the last block received (up to ${this.lastMark}): its mark moved back (a failover that lost writes?). ` +
            `Numbers are handed out again only once the mark passes ${this.lastMark}; raise it there, or use a new key`,
        ),
        false,
      );
      return false;
    }
    this.lastMark = to;
    this.lastError = undefined;
    // Replies arrive in the order of their marks (see refill): segments queue in ascending order.
    this.queue.push({ from: to - this.segmentSize, to });
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
    return true;
  }

  private onFailure(error: unknown, countFlight = true): void {
    if (countFlight) this.inFlight--;
    this.lastError = error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }
}
