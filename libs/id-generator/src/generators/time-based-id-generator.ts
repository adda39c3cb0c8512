import { ClockBackwardsError } from '../errors/clock-backwards.error.js';
import { ClockStalledError } from '../errors/clock-stalled.error.js';
import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import { InvalidIdError } from '../errors/invalid-id.error.js';
import { TimestampOverflowError } from '../errors/timestamp-overflow.error.js';
import { monotonicNow, NEXT_TICK_SPIN_LIMIT_MS, toClock } from '../clock/clock.utils.js';
import type { Clock, IdState, MachineIdLeaseLike, TimeBasedGeneratorOptions, TimeBasedIdGenerator } from '../id-generator.interfaces.js';

/** Readings of an unchanged clock before a stall can be declared. */
const STALL_MIN_READS = 10_000;

export interface TimeLayout {
  /** Smallest and largest epoch millisecond the timestamp bits can hold. */
  minTimestamp: number;
  maxTimestamp: number;
  machineBits: number;
  sequenceBits: number;
}

export function assertBits(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new IdGeneratorOptionsError(`${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

/**
 * The (timestamp, sequence) state machine every time-based generator shares:
 *  - a new millisecond starts the sequence at 0;
 *  - within one millisecond the sequence counts up and, when used up, the generator busy-waits
 *    for the next millisecond (under 1 ms on a real clock) instead of wrapping: a wrapped
 *    counter re-issues IDs;
 *  - a clock earlier than the last issued millisecond throws ClockBackwardsError (ClockSync
 *    decides whether to wait);
 *  - every new millisecond checks the machine-ID lease, when there is one.
 * Subclasses encode the state; `onTick` lets them precompute what a millisecond shares.
 */
export abstract class TimeBasedIdGeneratorBase implements TimeBasedIdGenerator {
  readonly machineId: number;
  readonly clock: Clock;
  protected readonly lease: MachineIdLeaseLike | undefined;
  protected readonly maxSequence: number;
  protected readonly layout: TimeLayout;
  /** Millisecond of the latest ID (or the floor given at construction). */
  protected lastTs: number;
  protected seq: number;

  protected constructor(options: TimeBasedGeneratorOptions, layout: TimeLayout) {
    if (!options || typeof options !== 'object') throw new IdGeneratorOptionsError('options with a machineId are required');
    this.layout = layout;
    const maxMachineId = 2 ** layout.machineBits - 1;
    const { machineId } = options;
    if (typeof machineId !== 'number' || !Number.isInteger(machineId) || machineId < 0 || machineId > maxMachineId) {
      throw new IdGeneratorOptionsError(
        `machineId must be an integer in [0, ${maxMachineId}] (${layout.machineBits} machine bits), got ${String(machineId)}`,
      );
    }
    this.machineId = machineId;
    this.clock = toClock(options.clock);
    this.lease = options.lease;
    this.maxSequence = 2 ** layout.sequenceBits - 1;
    const floor = options.lastTimestamp;
    if (floor !== undefined && (typeof floor !== 'number' || !Number.isSafeInteger(floor) || floor < 0)) {
      throw new IdGeneratorOptionsError(`lastTimestamp must be a non-negative integer (epoch ms), got ${String(floor)}`);
    }
    // The floor's millisecond counts as used up: the next ID lies strictly after it.
    this.lastTs = floor ?? -1;
    this.seq = this.maxSequence;
  }

  get lastTimestamp(): number {
    return this.lastTs;
  }

  abstract generate(): string;
  abstract parse(id: string): IdState;

  /** Called once per new millisecond, after the state moved to it. */
  protected onTick(_timestamp: number): void {}

  /** Moves the state to the next (timestamp, sequence). */
  protected advance(): void {
    let now = this.clock();
    if (now === this.lastTs) {
      if (this.seq < this.maxSequence) {
        this.seq++;
        return;
      }
      now = this.waitNextTick();
    } else if (now < this.lastTs) {
      throw new ClockBackwardsError(this.lastTs, now);
    }
    this.startTick(now);
  }

  protected startTick(now: number): void {
    if (!(now >= this.layout.minTimestamp && now <= this.layout.maxTimestamp)) {
      throw new TimestampOverflowError(now, this.layout.minTimestamp, this.layout.maxTimestamp);
    }
    this.lease?.check();
    this.lastTs = now;
    this.seq = 0;
    this.onTick(now);
  }

  /**
   * Busy-waits (bounded) until the clock passes the last millisecond; returns the new reading.
   * A stall is declared only after both real time and many readings went by, so a pause of the
   * process (GC, scheduling) mid-wait is not mistaken for a clock that stands still.
   */
  protected waitNextTick(): number {
    const last = this.lastTs;
    let deadline = 0;
    for (let reads = 1; ; reads++) {
      const now = this.clock();
      if (now > last) return now;
      if (now < last) throw new ClockBackwardsError(last, now);
      if (deadline === 0) deadline = monotonicNow() + NEXT_TICK_SPIN_LIMIT_MS;
      else if (reads > STALL_MIN_READS && monotonicNow() > deadline) throw new ClockStalledError(last, NEXT_TICK_SPIN_LIMIT_MS);
    }
  }

  protected stateOf(id: unknown, timestamp: number, machineId: number, sequence: number): IdState {
    if (timestamp < this.layout.minTimestamp || timestamp > this.layout.maxTimestamp) {
      throw new InvalidIdError(id, 'timestamp out of range');
    }
    return { timestamp, machineId, sequence };
  }
}
