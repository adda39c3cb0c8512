import { DEFAULT_OPERATION_TIMEOUT_MS, operationTimeoutProblem, withDeadline } from '@ddd-kit/core/internal';
import { Logger } from '@nestjs/common';
import { warnWithoutCommandTimeout } from '@ddd-kit/core/redis';
import type { Cluster, Redis } from 'ioredis';
import { IdGeneratorOptionsError } from '../../errors.js';

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

export interface RedisSegmentSourceOptions {
  /**
   * How long one `INCRBY` waits for Redis before it rejects with OperationTimeoutError (code
   * `OPERATION_TIMEOUT`); a block whose reply never came is a gap, never reissued. Milliseconds,
   * or `Infinity` for no deadline. Default 2,000.
   */
  operationTimeoutMs?: number;
}

/** Blocks from Redis `INCRBY key size` (single node or Cluster: one key, one connection, replies in order). */
export class RedisSegmentSource implements SegmentSource {
  readonly ordered = true;
  private readonly operationTimeoutMs: number;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisSegmentSourceOptions = {},
  ) {
    const { operationTimeoutMs = DEFAULT_OPERATION_TIMEOUT_MS } = options;
    const problem = operationTimeoutProblem(operationTimeoutMs);
    if (problem !== undefined) throw new IdGeneratorOptionsError(`RedisSegmentSource: ${problem}`);
    this.operationTimeoutMs = operationTimeoutMs;
    warnWithoutCommandTimeout(redis, new Logger('IdGeneratorModule'), 'RedisSegmentSource');
  }

  reserve(key: string, size: number): Promise<number> {
    return withDeadline(this.redis.incrby(key, size), this.operationTimeoutMs, `Redis segment of '${key}'`);
  }
}
