import type { Cluster, Redis } from 'ioredis';

/**
 * Where SegmentId gets its blocks: `reserve(key, size)` atomically moves the high-water mark of
 * `key` up by `size` and resolves the new mark `n`, reserving `(n - size, n]` to the caller
 * alone. A mark never goes back; a reservation whose reply is lost is a gap, never reissued.
 */
export interface SegmentSource {
  reserve(key: string, size: number): Promise<number>;
  /**
   * True when concurrent `reserve` calls for one key resolve in the order of their marks (one
   * connection, replies in order): SegmentId then keeps several requests in flight. Otherwise
   * it asks one at a time, so that its numbers still increase.
   */
  readonly ordered?: boolean;
}

/** Blocks from Redis `INCRBY key size` (single node or Cluster: one key, one connection, replies in order). */
export class RedisSegmentSource implements SegmentSource {
  readonly ordered = true;

  constructor(private readonly redis: Redis | Cluster) {}

  reserve(key: string, size: number): Promise<number> {
    return this.redis.incrby(key, size);
  }
}
