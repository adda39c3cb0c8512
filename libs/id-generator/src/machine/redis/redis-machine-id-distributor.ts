import type { Cluster, Redis } from 'ioredis';
import { monotonicNow, sleep, toClock } from '../../clock/clock.utils.js';
import { ClockBackwardsError } from '../../errors/clock-backwards.error.js';
import { IdGeneratorOptionsError } from '../../errors/id-generator-options.error.js';
import { MachineIdLostError } from '../../errors/machine-id-lost.error.js';
import { MachineIdOverflowError } from '../../errors/machine-id-overflow.error.js';
import type { Clock, ClockLike } from '../../id-generator.interfaces.js';
import { MachineIdDistributor, type MachineIdDistribution, type MachineIdRequest, type MachineIdState } from '../machine-id-distributor.js';
import { assertMachineIdRequest } from '../machine-id.validation.js';
import { DISTRIBUTE_SCRIPT, GUARD_SCRIPT, MACHINE_ID_KEY_COUNT, REVERT_SCRIPT } from './machine-id.scripts.js';

export interface RedisMachineIdDistributorOptions {
  /** Silence after which another instance may take an ID over; default 60,000 ms. */
  safeGuardMs?: number;
  /** Heartbeat interval; default 5,000 ms, and at most a third of safeGuardMs. */
  guardIntervalMs?: number;
  /** Prefix of every key; default `ddd-kit:machine-id:`. */
  keyPrefix?: string;
  /**
   * Longest wait for the local clock to pass a reused ID's last timestamp before giving the ID
   * back and failing; default min(5,000, safeGuardMs / 2).
   */
  maxClockWaitMs?: number;
  /** The local clock compared with last timestamps; default Date.now. */
  clock?: ClockLike;
}

/** The three commands this distributor defines on the client (EVALSHA, reloaded on NOSCRIPT). */
interface MachineIdCommands {
  dddKitMachineIdDistribute(...args: Array<string | number>): Promise<number[]>;
  dddKitMachineIdGuard(...args: Array<string | number>): Promise<number>;
  dddKitMachineIdRevert(...args: Array<string | number>): Promise<number>;
}

const COMMANDS: Array<[keyof MachineIdCommands, string]> = [
  ['dddKitMachineIdDistribute', DISTRIBUTE_SCRIPT],
  ['dddKitMachineIdGuard', GUARD_SCRIPT],
  ['dddKitMachineIdRevert', REVERT_SCRIPT],
];

/** The keys of one namespace, for inspection and clean-up. */
export interface MachineIdKeys {
  owners: string;
  instances: string;
  timestamps: string;
  heartbeats: string;
  released: string;
  meta: string;
}

/**
 * Machine IDs shared by a fleet through Redis (single node or Cluster; ioredis). Every step is
 * one Lua script run by SHA (`defineCommand`: EVALSHA, falling back to EVAL on NOSCRIPT):
 *  - `distribute`: the lowest released ID (with the last timestamp its holder reported), else
 *    a never-used one, else one whose holder has been silent for more than `safeGuardMs`;
 *    MachineIdOverflowError when every ID is held. Resolves only once the local clock is past
 *    the ID's last timestamp (waiting with a timer).
 *  - `guard`: the heartbeat; MachineIdLostError once the ID was taken over.
 *  - `revert`: releases the ID and records its last timestamp.
 * A namespace's keys share the hash tag `{<namespace>}`, so they live in one Cluster slot.
 */
export class RedisMachineIdDistributor extends MachineIdDistributor {
  override readonly safeGuardMs: number;
  override readonly guardIntervalMs: number;
  readonly keyPrefix: string;
  readonly maxClockWaitMs: number;
  private readonly clock: Clock;
  private readonly commands: MachineIdCommands;

  constructor(redis: Redis | Cluster, options: RedisMachineIdDistributorOptions = {}) {
    super();
    if (!redis || typeof (redis as Redis).defineCommand !== 'function') {
      throw new IdGeneratorOptionsError('RedisMachineIdDistributor needs an ioredis client (Redis or Cluster)');
    }
    const safeGuardMs = options.safeGuardMs ?? 60_000;
    if (!Number.isSafeInteger(safeGuardMs) || safeGuardMs < 100) {
      throw new IdGeneratorOptionsError(`safeGuardMs must be an integer of at least 100 ms, got ${String(safeGuardMs)}`);
    }
    const guardIntervalMs = options.guardIntervalMs ?? Math.min(5_000, Math.floor(safeGuardMs / 3));
    if (!Number.isSafeInteger(guardIntervalMs) || guardIntervalMs < 10 || guardIntervalMs * 3 > safeGuardMs) {
      throw new IdGeneratorOptionsError(
        `guardIntervalMs must be an integer of at least 10 ms and at most a third of safeGuardMs (${safeGuardMs}), so that two missed heartbeats do not lose the ID; got ${String(guardIntervalMs)}`,
      );
    }
    const keyPrefix = options.keyPrefix ?? 'ddd-kit:machine-id:';
    if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix)) {
      throw new IdGeneratorOptionsError('keyPrefix must be a string without "{" or "}" (the namespace is the hash tag)');
    }
    const maxClockWaitMs = options.maxClockWaitMs ?? Math.min(5_000, Math.floor(safeGuardMs / 2));
    if (!Number.isSafeInteger(maxClockWaitMs) || maxClockWaitMs < 0) {
      throw new IdGeneratorOptionsError(`maxClockWaitMs must be a non-negative integer, got ${String(maxClockWaitMs)}`);
    }
    this.safeGuardMs = safeGuardMs;
    this.guardIntervalMs = guardIntervalMs;
    this.keyPrefix = keyPrefix;
    this.maxClockWaitMs = maxClockWaitMs;
    this.clock = toClock(options.clock);
    const client = redis as Redis & Partial<MachineIdCommands>;
    for (const [name, lua] of COMMANDS) {
      if (typeof client[name] !== 'function') client.defineCommand(name, { numberOfKeys: MACHINE_ID_KEY_COUNT, lua });
    }
    this.commands = client as unknown as MachineIdCommands;
  }

  keys(namespace: string): MachineIdKeys {
    // Encoding keeps "{", "}" and ":" of a namespace out of the key syntax: one tag per namespace.
    const base = `${this.keyPrefix}{${encodeURIComponent(namespace)}}:`;
    return {
      owners: `${base}owners`,
      instances: `${base}instances`,
      timestamps: `${base}timestamps`,
      heartbeats: `${base}heartbeats`,
      released: `${base}released`,
      meta: `${base}meta`,
    };
  }

  async distribute(request: MachineIdRequest): Promise<MachineIdDistribution> {
    assertMachineIdRequest(request);
    const { namespace, machineBits, instanceId } = request;
    const reply = await this.commands.dddKitMachineIdDistribute(...this.keyList(namespace), instanceId, machineBits, this.safeGuardMs);
    if (reply[0] === -1) throw new MachineIdOverflowError(namespace, machineBits);
    if (reply[0] === -2) {
      throw new IdGeneratorOptionsError(
        `namespace "${namespace}" hands out machine IDs of ${reply[1]} bits, not ${machineBits}: use the same machineBits everywhere in a namespace, or another namespace`,
      );
    }
    const machineId = Number(reply[0]);
    const lastTimestamp = Number(reply[1]);
    await this.waitForClock({ namespace, machineBits, instanceId, machineId, lastTimestamp });
    return { machineId, lastTimestamp };
  }

  async guard(state: MachineIdState): Promise<void> {
    const held = await this.commands.dddKitMachineIdGuard(...this.keyList(state.namespace), state.instanceId, String(state.machineId), assertTimestamp(state.lastTimestamp));
    if (Number(held) !== 1) throw new MachineIdLostError(state.namespace, state.machineId, state.instanceId);
  }

  async revert(state: MachineIdState): Promise<boolean> {
    const released = await this.commands.dddKitMachineIdRevert(...this.keyList(state.namespace), state.instanceId, String(state.machineId), assertTimestamp(state.lastTimestamp));
    return Number(released) === 1;
  }

  private keyList(namespace: string): string[] {
    const k = this.keys(namespace);
    return [k.owners, k.instances, k.timestamps, k.heartbeats, k.released, k.meta];
  }

  /** No ID may be older than one the previous holder issued: wait (timer) until the clock is past it. */
  private async waitForClock(state: MachineIdState): Promise<void> {
    let now = this.clock();
    if (now > state.lastTimestamp) return;
    if (state.lastTimestamp - now > this.maxClockWaitMs) {
      await this.revert(state).catch(() => undefined);
      throw new ClockBackwardsError(
        state.lastTimestamp,
        now,
        `machine ID ${state.machineId} was last used at ${state.lastTimestamp}, more than maxClockWaitMs (${this.maxClockWaitMs}) ahead of this clock; synchronise the clocks (NTP) of the fleet`,
      );
    }
    const deadline = monotonicNow() + this.maxClockWaitMs + 1_000;
    while (now <= state.lastTimestamp) {
      if (monotonicNow() > deadline) {
        await this.revert(state).catch(() => undefined);
        throw new ClockBackwardsError(state.lastTimestamp, now, `the clock did not pass the last timestamp of machine ID ${state.machineId} in time`);
      }
      await sleep(state.lastTimestamp - now + 1);
      now = this.clock();
    }
  }
}

function assertTimestamp(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new IdGeneratorOptionsError(`lastTimestamp must be a non-negative integer, got ${String(value)}`);
  return value;
}
