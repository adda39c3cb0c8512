// Every error class of @ddd-kit/id-generator. Each extends IdGeneratorError (and so DddKitError):
// catch the family with `instanceof IdGeneratorError`, one error by its stable `code`. The main
// entry exports the errors an application handles at run time; the others (bad options, a class
// not declared with @Aggregate, an unknown generator name) stop the application at start-up
// and are told apart by their `code`.
import { DddKitError } from '@ddd-kit/core';

/** Base class of every error this library throws, so callers can catch them as one family. */
export class IdGeneratorError extends DddKitError {
  override readonly code: string = 'ID_GENERATOR';
}

/** Invalid configuration; thrown at construction or bootstrap, with what to change. */
export class IdGeneratorOptionsError extends IdGeneratorError {
  override readonly code = 'ID_GENERATOR_OPTIONS';
}

/** The clock reads earlier than the millisecond of an ID already issued. */
export class ClockBackwardsError extends IdGeneratorError {
  override readonly code = 'CLOCK_BACKWARDS';

  /** How far behind the clock is, in milliseconds. */
  readonly backwardsMs: number;

  constructor(
    readonly lastTimestamp: number,
    readonly currentTimestamp: number,
    detail = '',
  ) {
    super(
      `Clock moved backwards: it reads ${currentTimestamp} but an ID was already issued at ${lastTimestamp} ` +
        `(${lastTimestamp - currentTimestamp} ms behind)${detail ? `; ${detail}` : ''}`,
    );
    this.backwardsMs = lastTimestamp - currentTimestamp;
  }
}

/**
 * The sequence of the current millisecond is used up and the clock did not reach the next
 * millisecond within the spin limit. A real clock always does; an injected clock that stands
 * still would otherwise block the event loop for ever.
 */
export class ClockStalledError extends IdGeneratorError {
  override readonly code = 'CLOCK_STALLED';

  constructor(
    readonly timestamp: number,
    spinLimitMs: number,
  ) {
    super(
      `The clock stayed at ${timestamp} for more than ${spinLimitMs} ms of real time while the sequence of that ` +
        'millisecond was used up; an injected clock must advance',
    );
  }
}

/**
 * The clock returned something other than integer epoch milliseconds (a fraction such as
 * `performance.timeOrigin + performance.now()`, NaN, a negative or unsafe number). Such a
 * reading is never encoded into an ID: round it in the clock (`() => Math.floor(...)`).
 */
export class InvalidClockReadingError extends IdGeneratorError {
  override readonly code = 'INVALID_CLOCK_READING';

  constructor(readonly reading: unknown) {
    super(
      `The clock returned ${typeof reading === 'number' ? String(reading) : `a ${typeof reading}`}, not integer epoch milliseconds ` +
        '(a non-negative safe integer); a clock must return whole milliseconds, e.g. () => Math.floor(performance.timeOrigin + performance.now())',
    );
  }
}

/** The clock is outside the range the timestamp bits can hold (before the epoch or past its end). */
export class TimestampOverflowError extends IdGeneratorError {
  override readonly code = 'TIMESTAMP_OVERFLOW';

  constructor(
    readonly timestamp: number,
    min: number,
    max: number,
  ) {
    super(
      `Timestamp ${timestamp} is outside the range this generator can encode [${min}, ${max}]: check the clock, the epoch and the timestamp bits`,
    );
  }
}

/** `parse` was given something this generator cannot have produced. */
export class InvalidIdError extends IdGeneratorError {
  override readonly code = 'INVALID_ID';

  constructor(
    readonly id: unknown,
    reason: string,
  ) {
    super(
      `Not a valid ID (${reason}): ${typeof id === 'string' ? JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}…` : id) : String(id)}`,
    );
  }
}

/**
 * The machine-ID store could not be used at start-up: the module's own Redis client could not
 * connect, or the distributor failed while acquiring the ID. The message names the step and what
 * to check; `cause` is the driver's error.
 */
export class MachineIdStoreError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_STORE';
}

/** Every machine ID the bits allow is held by a live instance (or the fixed one does not fit). */
export class MachineIdOverflowError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_OVERFLOW';

  constructor(
    readonly namespace: string,
    readonly machineBits: number,
    detail?: string,
  ) {
    super(
      detail ??
        `No free machine ID in namespace "${namespace}": all ${2 ** machineBits} IDs of ${machineBits} bits are held by live instances. ` +
          'Raise machineBits, use another namespace, or wait until a silent instance is reclaimed (safeGuardMs)',
    );
  }
}

/**
 * This instance no longer holds its machine ID: it was silent for longer than its own
 * safe-guard period and another instance took the ID over. Generating more IDs with it could
 * duplicate theirs, so generation under that ID stops for good; MachineIdHolder acquires a new
 * machine ID and the module's generators switch to it.
 */
export class MachineIdLostError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_LOST';

  constructor(
    readonly namespace: string,
    readonly machineId: number,
    readonly instanceId: string,
  ) {
    super(
      `Machine ID ${machineId} of namespace "${namespace}" is no longer held by instance "${instanceId}" ` +
        '(it was reclaimed after a silence longer than its safeGuardMs); no more IDs are issued under it',
    );
  }
}

/**
 * No heartbeat has reached the distributor for longer than the lease allows (by the monotonic or
 * the wall clock): another instance may be about to take this machine ID over, so no ID is
 * issued until a heartbeat succeeds (or, if the ID was taken meanwhile, a new one is acquired).
 */
export class MachineIdLeaseExpiredError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_LEASE_EXPIRED';

  constructor(
    readonly machineId: number,
    silentForMs: number,
    clock: 'monotonic clock' | 'wall clock' = 'monotonic clock',
  ) {
    super(
      `Machine ID ${machineId}: no heartbeat succeeded for ${Number.isFinite(silentForMs) ? Math.round(silentForMs) : String(silentForMs)} ms ` +
        `by the ${clock}, so its lease expired and IDs are not issued until the distributor (e.g. Redis, PostgreSQL) answers again`,
    );
  }
}

/** The machine ID was given back (application shutdown); generators built on it issue no more IDs. */
export class MachineIdReleasedError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_RELEASED';

  constructor(readonly machineId: number) {
    super(`Machine ID ${machineId} was released (the application is shutting down); no more IDs are issued with it`);
  }
}

/** `generateGlobalId()` was called before any IdGeneratorModule finished initialising. */
export class NotInitializedGlobalIdGeneratorError extends IdGeneratorError {
  override readonly code = 'NOT_INITIALIZED_GLOBAL_ID_GENERATOR';

  constructor() {
    super(
      'The global ID generator is not initialised: import IdGeneratorModule.forRoot(...) (or forRootAsync) and call ' +
        'generateGlobalId() only after the application has initialised (or inject GlobalIdGenerator)',
    );
  }
}

/** `generateId(aggregate)` was called before any IdGeneratorModule finished initialising. */
export class NotInitializedAggregateIdGeneratorError extends IdGeneratorError {
  override readonly code = 'NOT_INITIALIZED_AGGREGATE_ID_GENERATOR';

  constructor() {
    super(
      'Aggregate ID generators are not initialised: import IdGeneratorModule.forRoot(...) (or forRootAsync) and call ' +
        'generateId() only after the application has initialised (or inject AggregateIdGeneratorRegistrar)',
    );
  }
}

/** An aggregate ID was asked for a class (or object) that is not decorated with `@Aggregate`. */
export class AggregateNotDecoratedError extends IdGeneratorError {
  override readonly code = 'AGGREGATE_NOT_DECORATED';

  constructor(what: string) {
    super(`${what} is not an aggregate: decorate its class with @Aggregate({ name: '...' }) or pass a NamedAggregate`);
  }
}

/** A generator was asked for by a name that `generators` does not hold. */
export class UnknownIdGeneratorError extends IdGeneratorError {
  override readonly code = 'UNKNOWN_ID_GENERATOR';

  constructor(
    readonly generatorName: string,
    known: string[],
    where: string,
  ) {
    super(
      `${where} names the ID generator "${generatorName}", which is not configured; add it to ` +
        `IdGeneratorModule.forRoot({ generators: { ${JSON.stringify(generatorName)}: ... } }) (configured: ${known.length ? known.map((k) => JSON.stringify(k)).join(', ') : 'none'})`,
    );
  }
}

/**
 * A synchronous `SegmentId.generate()` found no prefetched number left: the next segment has
 * not arrived from Redis yet. `generateAsync()` waits for it instead.
 */
export class SegmentExhaustedError extends IdGeneratorError {
  override readonly code = 'SEGMENT_EXHAUSTED';

  constructor(key: string, cause?: unknown) {
    super(
      `No prefetched segment left for "${key}"${cause ? ' (the last fetch failed)' : ''}: await generateAsync() or ready(), ` +
        'or raise segmentSize / prefetchSegments so that prefetching keeps ahead of demand',
      { cause },
    );
  }
}
