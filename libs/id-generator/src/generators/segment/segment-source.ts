import type { Cluster, Redis } from 'ioredis';

/**
 * Where SegmentId gets its blocks: `reserve(key, size)` atomically moves the high-water mark of
 * `key` up by `size` and resolves the new mark `n`, reserving `(n - size, n]` to the caller
 * alone. A mark never goes back; a reservation whose reply is lost is a gap, never reissued.
 */
export interface SegmentSource {
  reserve(key: string, size: number): Promise<number>;
}

/** Blocks from Redis `INCRBY key size` (single node or Cluster). */
export class RedisSegmentSource implements SegmentSource {
  constructor(private readonly redis: Redis | Cluster) {}

  reserve(key: string, size: number): Promise<number> {
    return this.redis.incrby(key, size);
  }
}
