import type { Cluster, Redis } from 'ioredis';
import { IdempotencyArgumentError } from '../../errors.js';
import type { IdempotencyOutcome, IdempotencyRequest, IdempotencyStore } from '../../idempotency.interfaces.js';
import { assertDuration, checkRequest, DEFAULT_LEASE_MS, DEFAULT_TTL_MS } from '../../idempotency.validation.js';
import { runLeased, type BeginOutcome, type LeasedRecords } from '../../leased-run.js';
import { DEFAULT_OPERATION_TIMEOUT_MS, operationTimeoutProblem, withDeadline } from '@ddd-kit/core/internal';
import { Logger } from '@nestjs/common';
import { runScript, warnWithoutCommandTimeout } from '@ddd-kit/core/redis';
import { BEGIN, COMPLETE, RELEASE } from './redis-idempotency.scripts.js';

export interface RedisIdempotencyStoreOptions {
  /** Put before every record key; default `'ddd-kit:idempotency:'`. Keeps applications sharing one Redis apart. */
  keyPrefix?: string;
  /** How long a result is replayed when a request says nothing; default 24 hours. */
  ttlMs?: number;
  /**
   * How long a key stays in progress: the longest the work may take, and how long a key whose
   * outcome is unknown (a crash, a fault on completion) refuses repeats. Default 60,000 ms.
   */
  leaseMs?: number;
  /**
   * How long one step on Redis (begin, complete, release) waits for an answer before it rejects
   * with OperationTimeoutError (code `OPERATION_TIMEOUT`): a Redis that does not answer costs a
   * request this long, not the whole stall. The step's outcome is unknown: a begin that timed out
   * runs no work; a key it may have taken stays in progress until its lease ends. Milliseconds,
   * or `Infinity` for no deadline. Default 2,000.
   */
  operationTimeoutMs?: number;
}

/**
 * Idempotency records on Redis (ioredis; one node or a Cluster): one hash a key, each state
 * change one Lua script on it (atomic on the server, and safe to resend), expiry by Redis
 * itself. The client stays the caller's: the store neither connects nor quits it.
 *
 * A store beside the effect's store: between the work and its completion a crash leaves the key
 * in progress until its lease ends (a repeat gets IdempotencyInProgressError meanwhile, never a
 * second run); see the README for what an application does about that window.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly records: LeasedRecords;

  constructor(
    private readonly client: Redis | Cluster,
    options: RedisIdempotencyStoreOptions = {},
  ) {
    if (typeof (client as Partial<Redis> | undefined)?.evalsha !== 'function')
      throw new IdempotencyArgumentError(
        'RedisIdempotencyStore: pass an ioredis client (new Redis(url) or new Cluster(nodes))',
      );
    const {
      keyPrefix = 'ddd-kit:idempotency:',
      ttlMs = DEFAULT_TTL_MS,
      leaseMs = DEFAULT_LEASE_MS,
      operationTimeoutMs = DEFAULT_OPERATION_TIMEOUT_MS,
    } = options ?? {};
    if (typeof keyPrefix !== 'string')
      throw new IdempotencyArgumentError('RedisIdempotencyStore: keyPrefix must be a string');
    assertDuration(ttlMs, 'RedisIdempotencyStore: ttlMs');
    assertDuration(leaseMs, 'RedisIdempotencyStore: leaseMs');
    const timeoutProblem = operationTimeoutProblem(operationTimeoutMs);
    if (timeoutProblem !== undefined) throw new IdempotencyArgumentError(`RedisIdempotencyStore: ${timeoutProblem}`);
    warnWithoutCommandTimeout(client, new Logger('IdempotencyModule'), 'RedisIdempotencyStore');
    const bounded = <T>(work: Promise<T>, step: string): Promise<T> =>
      withDeadline(work, operationTimeoutMs, `Redis idempotency ${step}`);
    this.prefix = keyPrefix;
    this.ttlMs = ttlMs;
    this.leaseMs = leaseMs;
    this.records = {
      begin: async (key, fingerprint, token, lease) => {
        const reply = (await bounded(
          runScript(this.client, BEGIN, this.recordKey(key), fingerprint, token, String(lease)),
          'begin',
        )) as [string, string?];
        return toBegin(reply);
      },
      complete: async (key, token, result, ttl) =>
        (await bounded(
          runScript(this.client, COMPLETE, this.recordKey(key), token, result, String(ttl)),
          'complete',
        )) === 1,
      release: async (key, token) =>
        void (await bounded(runScript(this.client, RELEASE, this.recordKey(key), token), 'release')),
    };
  }

  async run<R>(request: IdempotencyRequest, work: () => Promise<R>): Promise<IdempotencyOutcome<R>> {
    const { ttlMs } = checkRequest(request, work, this.ttlMs);
    return runLeased(this.records, request, work, { ttlMs, leaseMs: this.leaseMs });
  }

  /** The Redis key of a record (the whole key after the prefix: no two keys share one). */
  recordKey(key: string): string {
    return `${this.prefix}${key}`;
  }
}

function toBegin(reply: [string, string?]): BeginOutcome {
  switch (reply[0]) {
    case 'a':
      return { state: 'acquired' };
    case 'c':
      return { state: 'conflict' };
    case 'p':
      return { state: 'in-progress' };
    case 'd':
      return { state: 'done', result: reply[1] ?? '{}' };
    default:
      throw new Error(`RedisIdempotencyStore: unexpected reply ${JSON.stringify(reply)}`);
  }
}
