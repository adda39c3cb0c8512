import {
  ClockBackwardsError,
  ClockStalledError,
  IdGeneratorOptionsError,
  InvalidIdError,
  TimestampOverflowError,
} from '../errors.js';
import {
  CATCH_UP_LIMIT_MS,
  CLOCK_READING_REUSE,
  checkReading,
  monotonicNow,
  NEXT_TICK_SPIN_LIMIT_MS,
  toClock,
} from '../clock/clock.utils.js';
import type {
  Clock,
  IdState,
  MachineIdLeaseLike,
  TimeBasedGeneratorOptions,
  TimeBasedIdGenerator,
} from '../id-generator.interfaces.js';

/** Readings of an unchanged clock before a stall can be declared. */
const STALL_MIN_READS = 100_000;

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
 *  - a new millisecond starts the sequence at 0 when the last one reached the reset threshold
 *    (or in a burst), else where the last one left off (low traffic then spreads over `id % N`,
 *    as CosId's sequenceResetThreshold does);
 *  - within one millisecond the sequence counts up and, when used up, the generator moves to
 *    the next millisecond, busy-waiting for the clock to reach it (under 1 ms on a real clock)
 *    instead of wrapping: a wrapped counter re-issues IDs. From then on (a burst) it enters
 *    consecutive milliseconds, each only once the clock has reached it, so a pause of the
 *    process (GC, CPU throttling) costs no sequence space; it jumps to the clock when it falls
 *    more than CATCH_UP_LIMIT_MS behind;
 *  - a clock earlier than the last issued millisecond throws ClockBackwardsError (ClockSync
 *    decides whether to wait);
 *  - every new millisecond checks the machine-ID lease, when there is one, after the clock
 *    reading that started it;
 *  - a reading that is not a non-negative safe integer throws InvalidClockReadingError and is
 *    never encoded (a reading equal to the current millisecond needs no check);
 *  - with the default clock, one reading serves up to CLOCK_READING_REUSE further IDs within
 *    one synchronous run (an injected clock is read for every ID unless told otherwise).
 * Subclasses encode the state; `onTick` lets them precompute what a millisecond shares.
 */
export abstract class TimeBasedIdGeneratorBase implements TimeBasedIdGenerator {
  readonly machineId: number;
  readonly clock: Clock;
  protected readonly lease: MachineIdLeaseLike | undefined;
  protected readonly maxSequence: number;
  /** A new millisecond restarts the sequence at 0 once it reached this (see the options). */
  protected readonly sequenceResetThreshold: number;
  protected readonly layout: TimeLayout;
  /** Millisecond of the latest ID (or the floor given at construction). */
  protected lastTs: number;
  protected seq: number;
  /** In a burst: enter consecutive milliseconds, none skipped (see CATCH_UP_LIMIT_MS). */
  protected catchingUp = false;
  /** The current millisecond was entered after the clock had passed it: fill it regardless. */
  protected behind = false;
  private started = false;
  /** IDs that may still reuse the last clock reading (see CLOCK_READING_REUSE). */
  protected cachedReadings = 0;
  private readonly readingReuse: number;
  private expiryQueued = false;
  private readonly expireReading = (): void => {
    this.cachedReadings = 0;
    this.expiryQueued = false;
  };

  protected constructor(options: TimeBasedGeneratorOptions, layout: TimeLayout) {
    if (!options || typeof options !== 'object')
      throw new IdGeneratorOptionsError('options with a machineId are required');
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
    this.readingReuse = assertBits(
      'clockReadingReuse',
      options.clockReadingReuse ?? (options.clock === undefined ? CLOCK_READING_REUSE : 0),
      0,
      64,
    );
    this.lease = options.lease;
    this.maxSequence = 2 ** layout.sequenceBits - 1;
    this.sequenceResetThreshold = assertBits(
      'sequenceResetThreshold',
      options.sequenceResetThreshold ?? 2 ** (layout.sequenceBits - 1) - 1,
      0,
      this.maxSequence,
    );
    const floor = options.lastTimestamp;
    if (floor !== undefined && (typeof floor !== 'number' || !Number.isSafeInteger(floor) || floor < 0)) {
      throw new IdGeneratorOptionsError(
        `lastTimestamp must be a non-negative integer (epoch ms), got ${String(floor)}`,
      );
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

  /** `generate()` as a promise (a bare generator has nothing to wait for; ClockSync waits out a clock moved back). */
  generateAsync(): Promise<string> {
    return new Promise((resolve) => resolve(this.generate()));
  }

  /** Called once per new millisecond, after the state moved to it. */
  protected onTick(_timestamp: number): void {}

  /** Moves the state to the next (timestamp, sequence). */
  protected advance(): void {
    if (this.cachedReadings !== 0) {
      this.cachedReadings--;
      if (this.seq < this.maxSequence) {
        this.seq++;
        return;
      }
    }
    const now = this.clock();
    // A reading equal to the current millisecond is a valid one; any other is checked before use.
    if (now !== this.lastTs && this.enterReading(now)) {
      this.keepReading();
      return;
    }
    if (this.seq < this.maxSequence) {
      this.seq++;
    } else {
      this.startTick(this.afterExhaustion());
    }
    this.keepReading();
  }

  /**
   * A reading other than the current millisecond: refuses an invalid one, throws
   * ClockBackwardsError for an earlier one, and starts a new millisecond for a later one
   * (returning true); returns false while a burst fills a millisecond the clock has passed.
   */
  protected enterReading(now: number): boolean {
    checkReading(now);
    if (now < this.lastTs) throw new ClockBackwardsError(this.lastTs, now);
    if (this.behind && now - this.lastTs <= CATCH_UP_LIMIT_MS) return false;
    this.startTick(this.nextTick(now));
    return true;
  }

  /** Lets the next few IDs of this synchronous run reuse the clock reading just made. */
  protected keepReading(): void {
    if (this.readingReuse === 0) return;
    this.cachedReadings = this.readingReuse;
    if (!this.expiryQueued) {
      this.expiryQueued = true;
      queueMicrotask(this.expireReading);
    }
  }

  /**
   * The millisecond to enter when the clock has moved past the current one: the clock's, or
   * in a burst the next one, so that milliseconds skipped by a pause of the process are not
   * lost (while at most CATCH_UP_LIMIT_MS behind).
   */
  protected nextTick(now: number): number {
    // A burst: the last millisecond was used up, or an earlier one and none skipped since.
    if (this.started && (this.catchingUp || this.seq === this.maxSequence) && now - this.lastTs <= CATCH_UP_LIMIT_MS) {
      this.catchingUp = true;
      this.behind = now > this.lastTs + 1;
      return this.lastTs + 1;
    }
    this.catchingUp = false;
    this.behind = false;
    return now;
  }

  /** The millisecond to enter once the current one's sequence is used up (a burst). */
  protected afterExhaustion(): number {
    const next = this.lastTs + 1;
    let now = checkReading(this.clock());
    if (now < next) now = this.waitNextTick();
    if (now - next > CATCH_UP_LIMIT_MS) {
      this.catchingUp = false;
      this.behind = false;
      return now;
    }
    this.catchingUp = true;
    this.behind = now > next;
    return next;
  }

  /**
   * Enters millisecond `now`. Always called after the clock reading that led here, so the lease
   * check below sees at least as much elapsed time as that reading: a process paused between
   * the reading and this point (SIGSTOP, a suspended VM) finds its lease expired on resuming
   * instead of issuing one more ID under a machine ID that may have moved meanwhile.
   */
  protected startTick(now: number): void {
    if (!(now >= this.layout.minTimestamp && now <= this.layout.maxTimestamp)) {
      throw new TimestampOverflowError(now, this.layout.minTimestamp, this.layout.maxTimestamp);
    }
    this.lease?.check();
    this.started = true;
    this.lastTs = now;
    // Every (millisecond, sequence) pair is new: any start within the millisecond is unique. A
    // burst catching up on skipped milliseconds starts each at 0, to keep its whole range.
    this.seq = this.catchingUp || this.seq >= this.sequenceResetThreshold ? 0 : this.seq + 1;
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
      const now = checkReading(this.clock());
      if (now > last) return now;
      if (now < last) throw new ClockBackwardsError(last, now);
      if (deadline === 0) deadline = monotonicNow() + NEXT_TICK_SPIN_LIMIT_MS;
      else if (reads > STALL_MIN_READS && (reads & 1023) === 0 && monotonicNow() > deadline)
        throw new ClockStalledError(last, NEXT_TICK_SPIN_LIMIT_MS);
    }
  }

  protected stateOf(id: unknown, timestamp: number, machineId: number, sequence: number): IdState {
    if (timestamp < this.layout.minTimestamp || timestamp > this.layout.maxTimestamp) {
      throw new InvalidIdError(id, 'timestamp out of range');
    }
    return { timestamp, machineId, sequence };
  }
}
