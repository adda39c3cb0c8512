import { randomUUID } from 'node:crypto';
import { DEFAULT_OPERATION_TIMEOUT_MS, operationTimeoutProblem, withDeadline } from '@ddd-kit/core/internal';
import { Logger } from '@nestjs/common';
import { runScriptOnKeys, warnWithoutCommandTimeout } from '@ddd-kit/core/redis';
import type { Cluster, Redis } from 'ioredis';
import { IdGeneratorOptionsError } from '../../errors.js';
import {
  LeasedMachineIdDistributor,
  type LeasedMachineIdDistributorOptions,
  type StoreDistribution,
} from '../leased-machine-id-distributor.js';
import type { MachineIdRequest, MachineIdState } from '../machine-id-distributor.js';
import { DISTRIBUTE_SCRIPT, GUARD_SCRIPT, REVERT_SCRIPT } from './machine-id.scripts.js';

export interface RedisMachineIdDistributorOptions extends LeasedMachineIdDistributorOptions {
  /**
   * Prefix of every key, used as given (include a separator); default `ddd-kit:machine-id:`.
   * The keys of a namespace are `<keyPrefix>{<namespace, URI-encoded>}:<name>` (see `keys()`).
   * Distinct prefixes keep deployments that share one Redis apart.
   */
  keyPrefix?: string;
  /**
   * How long one call on Redis (distribute, heartbeat, release) waits for an answer before it
   * rejects with OperationTimeoutError (code `OPERATION_TIMEOUT`). Its outcome is then unknown,
   * as after a lost reply: a distribute is asked again (it answers the ID this instance holds), a
   * missed heartbeat counts as one, and a release left unanswered leaves the ID to its lease.
   * Milliseconds, or `Infinity` for no deadline. Default 2,000.
   */
  operationTimeoutMs?: number;
}

/**
 * The keys of one namespace (`RedisMachineIdDistributor.keys(namespace)`), for inspection and
 * clean-up. Besides these, each distribute and revert call leaves `<base>op:<uuid>` for ten
 * minutes (the reply a resend of that call gets).
 */
export interface MachineIdKeys {
  /** hash machineId → instanceId: the IDs held now. */
  owners: string;
  /** hash instanceId → machineId. */
  instances: string;
  /** hash machineId → the timestamp its next holder must start after (kept after release). */
  timestamps: string;
  /** sorted set machineId → its holder's deadline (server clock, epoch ms). */
  deadlines: string;
  /** sorted set of released machine IDs, lowest first. */
  released: string;
  /** hash: `machineBits` of the namespace and `next`, the first never-used ID. */
  meta: string;
  /** hash machineId → its holder's deadline by the holder's own clock (epoch ms). */
  bounds: string;
}

/**
 * Machine IDs shared by a fleet through Redis (single node or Cluster; ioredis). Every step is
 * one Lua script run by SHA (EVALSHA, falling back to EVAL on NOSCRIPT; `@ddd-kit/core/redis`):
 *  - `distribute`: the ID this instance already holds, else the lowest released ID (with the
 *    last timestamp its holder reported), else a never-used one, else one whose holder's own
 *    deadline has passed (server clock); MachineIdOverflowError when every ID is held. Writes
 *    this instance's deadline. Resolves only once the local clock is past the ID's last
 *    timestamp (waiting with a timer).
 *  - `guard`: the heartbeat; moves this instance's deadline on; MachineIdLostError once the ID
 *    was taken over.
 *  - `revert`: releases the ID and records its last timestamp.
 * A resend of a distribute or revert whose reply was lost gets the reply of the first run; a
 * guard only moves values forward. A namespace's keys share the hash tag `{<namespace>}`, so
 * they live in one Cluster slot.
 */
export class RedisMachineIdDistributor extends LeasedMachineIdDistributor {
  readonly keyPrefix: string;
  private readonly redis: Redis | Cluster;
  private readonly operationTimeoutMs: number;

  constructor(redis: Redis | Cluster, options: RedisMachineIdDistributorOptions = {}) {
    super(options);
    if (!redis || typeof (redis as Partial<Redis>).evalsha !== 'function') {
      throw new IdGeneratorOptionsError('RedisMachineIdDistributor needs an ioredis client (Redis or Cluster)');
    }
    const keyPrefix = options.keyPrefix ?? 'ddd-kit:machine-id:';
    if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix)) {
      throw new IdGeneratorOptionsError(
        'keyPrefix must be a string without "{" or "}" (the namespace is the hash tag)',
      );
    }
    const { operationTimeoutMs = DEFAULT_OPERATION_TIMEOUT_MS } = options;
    const timeoutProblem = operationTimeoutProblem(operationTimeoutMs);
    if (timeoutProblem !== undefined) throw new IdGeneratorOptionsError(`RedisMachineIdDistributor: ${timeoutProblem}`);
    this.keyPrefix = keyPrefix;
    this.redis = redis;
    this.operationTimeoutMs = operationTimeoutMs;
    warnWithoutCommandTimeout(redis, new Logger('IdGeneratorModule'), 'RedisMachineIdDistributor');
  }

  /** The Redis keys of a namespace: `<keyPrefix>{<namespace, URI-encoded>}:<name>`. */
  keys(namespace: string): MachineIdKeys {
    const base = this.base(namespace);
    return {
      owners: `${base}owners`,
      instances: `${base}instances`,
      timestamps: `${base}timestamps`,
      deadlines: `${base}deadlines`,
      released: `${base}released`,
      meta: `${base}meta`,
      bounds: `${base}bounds`,
    };
  }

  protected async storeDistribute(request: MachineIdRequest, until: number): Promise<StoreDistribution> {
    const { namespace, machineBits, instanceId } = request;
    // Distribute and revert also take the key of their call (a resend of the same call finds its reply).
    const reply = (await this.bounded(
      runScriptOnKeys(
        this.redis,
        DISTRIBUTE_SCRIPT,
        [...this.keyList(namespace), this.opKey(namespace)],
        [instanceId, machineBits, this.safeGuardMs, until],
      ),
      'distribute',
    )) as number[];
    if (reply[0] === -1) return { overflow: true };
    if (reply[0] === -2) return { storedBits: Number(reply[1]) };
    return { machineId: Number(reply[0]), lastTimestamp: Number(reply[1]) };
  }

  protected async storeGuard(state: MachineIdState, until: number): Promise<boolean> {
    const held = await this.bounded(
      runScriptOnKeys(this.redis, GUARD_SCRIPT, this.keyList(state.namespace), [
        state.instanceId,
        String(state.machineId),
        state.lastTimestamp,
        this.safeGuardMs,
        until,
      ]),
      'heartbeat',
    );
    return Number(held) === 1;
  }

  /**
   * The release. When the application has closed the client already (a `quit()` in its own
   * `onModuleDestroy` or `onApplicationShutdown`, which may run before this one), the release is sent on a
   * short-lived copy of the client instead of being lost with the ID held until `safeGuardMs`.
   * The copy sends the same arguments, op key included: if the first try ran before the
   * connection closed, the copy gets that run's reply.
   */
  protected async storeRevert(state: MachineIdState): Promise<boolean> {
    const keys = [...this.keyList(state.namespace), this.opKey(state.namespace)];
    const args = [state.instanceId, String(state.machineId), state.lastTimestamp];
    const revert = async (client: Redis | Cluster) =>
      Number(await this.bounded(runScriptOnKeys(client, REVERT_SCRIPT, keys, args), 'release')) === 1;
    if (isClosed(this.redis)) return this.revertOnCopy(revert);
    try {
      return await revert(this.redis);
    } catch (error) {
      if (!isClosed(this.redis)) throw error;
      return this.revertOnCopy(revert);
    }
  }

  private async revertOnCopy(revert: (client: Redis | Cluster) => Promise<boolean>): Promise<boolean> {
    const copy = (this.redis as Redis).duplicate();
    // Its errors reach the caller through the command; no "Unhandled error event" lines.
    copy.on('error', () => undefined);
    try {
      return await revert(copy);
    } finally {
      await copy.quit().catch(() => copy.disconnect());
    }
  }

  /** `work` under the operation deadline. */
  private bounded<T>(work: Promise<T>, call: string): Promise<T> {
    return withDeadline(work, this.operationTimeoutMs, `Redis machine-ID ${call}`);
  }

  private base(namespace: string): string {
    // Encoding keeps "{", "}" and ":" of a namespace out of the key syntax: one tag per namespace.
    return `${this.keyPrefix}{${encodeURIComponent(namespace)}}:`;
  }

  private keyList(namespace: string): string[] {
    const k = this.keys(namespace);
    return [k.owners, k.instances, k.timestamps, k.deadlines, k.released, k.meta, k.bounds];
  }

  /** A key of this call alone (its arguments, and so this key, are what a resend repeats). */
  private opKey(namespace: string): string {
    return `${this.base(namespace)}op:${randomUUID()}`;
  }
}

/** Closed by the application (`quit()` or `disconnect()`): ioredis will not reconnect it. */
function isClosed(redis: Redis | Cluster): boolean {
  return redis.status === 'end';
}
