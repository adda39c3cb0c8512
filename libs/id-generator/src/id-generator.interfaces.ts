/** Every generator: strings are the safe JavaScript default (no precision loss past 2^53). */
export interface IdGenerator {
  generate(): string;
}

/**
 * A generator that can wait instead of failing. Every generator of this library, and whatever
 * `GlobalIdGenerator`, `AggregateIdGeneratorRegistrar.get()` and `generateIdAsync()` hand out,
 * offers it (a plain IdGenerator is wrapped: its `generateAsync()` resolves `generate()`).
 */
export interface AsyncIdGenerator extends IdGenerator {
  /**
   * An ID, waiting without blocking the event loop where `generate()` would throw for a passing
   * reason: a clock that moved back by up to ClockSync's `brokenThresholdMs`, a SegmentId block
   * on its way, a machine-ID lease being renewed or a lost machine ID being replaced (the
   * module's generators). Rejects with the error otherwise.
   */
  generateAsync(): Promise<string>;
}

/** What a time-based ID holds. */
export interface IdState {
  /** Unix epoch milliseconds. */
  timestamp: number;
  machineId: number;
  sequence: number;
}

/** A source of Unix epoch milliseconds. Injectable so tests can move time. */
export type Clock = () => number;

/** A clock as a function, or as an object with `now()` (e.g. `{ now: () => t }`). */
export type ClockLike = Clock | { now(): number };

/** Checked by a time-based generator whenever it starts a new millisecond. */
export interface MachineIdLeaseLike {
  /** Throws when this instance may no longer issue IDs under its machine ID. */
  check(): void;
}

/** A generator whose IDs carry (timestamp, machine ID, sequence). */
export interface TimeBasedIdGenerator extends IdGenerator {
  readonly machineId: number;
  readonly clock: Clock;
  /** The millisecond of the latest ID issued (or the floor it was started with). */
  readonly lastTimestamp: number;
  parse(id: string): IdState;
}

/** Options every time-based generator accepts. */
export interface TimeBasedGeneratorOptions {
  machineId: number;
  /** Defaults to `Date.now`. */
  clock?: ClockLike;
  /**
   * IDs are issued only for milliseconds after this one: the last timestamp a previous holder
   * of the machine ID used (what a MachineIdDistributor hands out).
   */
  lastTimestamp?: number;
  /** When given, checked at every new millisecond; a lost or expired lease stops generation. */
  lease?: MachineIdLeaseLike;
  /**
   * How many further IDs may reuse one clock reading within one synchronous run (0 to 64).
   * Default 7 with the default clock (`Date.now()` costs more than an ID), 0 with an injected
   * clock (every ID consults it). See CLOCK_READING_REUSE.
   */
  clockReadingReuse?: number;
  /**
   * At a new millisecond the sequence restarts at 0 only when the last one reached this value;
   * below it (low traffic) it carries on, so that IDs spread over `id % N` shards instead of
   * ending in sequence 0 each millisecond. Default half the sequence range; 0 restarts every
   * millisecond. A burst is unaffected: a used-up millisecond always restarts at 0.
   */
  sequenceResetThreshold?: number;
}
