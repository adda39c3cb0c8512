import { checkReading, monotonicNow, sleep, toClock } from '../clock/clock.utils.js';
import { ClockBackwardsError, IdGeneratorOptionsError, MachineIdLostError, MachineIdOverflowError } from '../errors.js';
import type { Clock, ClockLike } from '../id-generator.interfaces.js';
import {
  MachineIdDistributor,
  type MachineIdDistribution,
  type MachineIdRequest,
  type MachineIdState,
} from './machine-id-distributor.js';
import { assertMachineIdRequest } from './machine-id.validation.js';

/** The options every store-backed distributor takes. */
export interface LeasedMachineIdDistributorOptions {
  /**
   * This instance's lease: it writes its deadline (store clock: now + safeGuardMs) at distribute
   * and at every heartbeat, stops issuing IDs a little before it, and no other instance may take
   * its ID until that deadline has passed, whatever their own setting. Default 60,000 ms.
   */
  safeGuardMs?: number;
  /** Heartbeat interval; default 5,000 ms, and at most a third of safeGuardMs. */
  guardIntervalMs?: number;
  /**
   * Longest wait for the local clock to pass a reused ID's last timestamp before giving the ID
   * back and failing; default min(5,000, safeGuardMs / 2).
   */
  maxClockWaitMs?: number;
  /**
   * This instance's wall clock: compared with last timestamps, and the clock in which its
   * deadline is recorded for the next holder. Use the clock of the generators; default Date.now.
   */
  clock?: ClockLike;
}

/** What a store answers to a distribute: an ID and the floor its IDs must follow, or why not. */
export type StoreDistribution =
  { machineId: number; lastTimestamp: number } | { overflow: true } | { storedBits: number };

/**
 * The lease rules shared by the store-backed distributors (Redis, PostgreSQL); a store
 * implements three atomic steps and this class does the rest:
 *  - the holder's own deadline is written by every distribute and guard: the store's clock + the
 *    holder's `safeGuardMs` (decides when the ID may be reclaimed), and the holder's own clock +
 *    `safeGuardMs` (`until`: the timestamps a later holder must start after);
 *  - a distribute resolves only once the local clock is past the ID's floor (a timer, at most
 *    `maxClockWaitMs`; beyond that the ID is given back and ClockBackwardsError thrown).
 */
export abstract class LeasedMachineIdDistributor extends MachineIdDistributor {
  override readonly safeGuardMs: number;
  override readonly guardIntervalMs: number;
  readonly maxClockWaitMs: number;
  protected readonly clock: Clock;

  protected constructor(options: LeasedMachineIdDistributorOptions) {
    super();
    const safeGuardMs = options.safeGuardMs ?? 60_000;
    if (!Number.isSafeInteger(safeGuardMs) || safeGuardMs < 100) {
      throw new IdGeneratorOptionsError(
        `safeGuardMs must be an integer of at least 100 ms, got ${String(safeGuardMs)}`,
      );
    }
    const guardIntervalMs = options.guardIntervalMs ?? Math.min(5_000, Math.floor(safeGuardMs / 3));
    if (!Number.isSafeInteger(guardIntervalMs) || guardIntervalMs < 10 || guardIntervalMs * 3 > safeGuardMs) {
      throw new IdGeneratorOptionsError(
        `guardIntervalMs must be an integer of at least 10 ms and at most a third of safeGuardMs (${safeGuardMs}), so that two missed heartbeats do not lose the ID; got ${String(guardIntervalMs)}`,
      );
    }
    const maxClockWaitMs = options.maxClockWaitMs ?? Math.min(5_000, Math.floor(safeGuardMs / 2));
    if (!Number.isSafeInteger(maxClockWaitMs) || maxClockWaitMs < 0) {
      throw new IdGeneratorOptionsError(`maxClockWaitMs must be a non-negative integer, got ${String(maxClockWaitMs)}`);
    }
    this.safeGuardMs = safeGuardMs;
    this.guardIntervalMs = guardIntervalMs;
    this.maxClockWaitMs = maxClockWaitMs;
    this.clock = toClock(options.clock);
  }

  /** Atomically: the ID this instance holds, else a released one, else a never-used one, else one past its holder's deadline. */
  protected abstract storeDistribute(request: MachineIdRequest, until: number): Promise<StoreDistribution>;
  /** Atomically: moves this holder's deadline and records its timestamps; false when the ID is not its own. */
  protected abstract storeGuard(state: MachineIdState, until: number): Promise<boolean>;
  /** Atomically: releases the ID held by this instance; true also for a resend of a call that released it. */
  protected abstract storeRevert(state: MachineIdState): Promise<boolean>;

  async distribute(request: MachineIdRequest): Promise<MachineIdDistribution> {
    assertMachineIdRequest(request);
    const { namespace, machineBits, instanceId } = request;
    const reply = await this.storeDistribute({ namespace, machineBits, instanceId }, this.until());
    if ('overflow' in reply) throw new MachineIdOverflowError(namespace, machineBits);
    if ('storedBits' in reply) {
      throw new IdGeneratorOptionsError(
        `namespace "${namespace}" hands out machine IDs of ${reply.storedBits} bits, not ${machineBits}: use the same machineBits everywhere in a namespace, or another namespace`,
      );
    }
    const { machineId, lastTimestamp } = reply;
    await this.waitForClock({ namespace, machineBits, instanceId, machineId, lastTimestamp });
    return { machineId, lastTimestamp };
  }

  async guard(state: MachineIdState): Promise<void> {
    assertTimestamp(state.lastTimestamp);
    if (!(await this.storeGuard(state, this.until())))
      throw new MachineIdLostError(state.namespace, state.machineId, state.instanceId);
  }

  async revert(state: MachineIdState): Promise<boolean> {
    assertTimestamp(state.lastTimestamp);
    return this.storeRevert(state);
  }

  /**
   * This instance's deadline by its own clock, read before the request leaves: the holder's
   * lease, counted from a reading taken before this one and shorter than safeGuardMs, ends
   * earlier, so no ID it issues carries this millisecond or a later one.
   */
  private until(): number {
    return checkReading(this.clock()) + this.safeGuardMs;
  }

  /** No ID may be older than one the previous holder issued: wait (timer) until the clock is past it. */
  private async waitForClock(state: MachineIdState): Promise<void> {
    let now = checkReading(this.clock());
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
        throw new ClockBackwardsError(
          state.lastTimestamp,
          now,
          `the clock did not pass the last timestamp of machine ID ${state.machineId} in time`,
        );
      }
      await sleep(state.lastTimestamp - now + 1);
      now = checkReading(this.clock());
    }
  }
}

function assertTimestamp(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new IdGeneratorOptionsError(`lastTimestamp must be a non-negative integer, got ${String(value)}`);
  return value;
}
