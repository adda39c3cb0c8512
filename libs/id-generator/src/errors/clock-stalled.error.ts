import { IdGeneratorError } from './id-generator.error.js';

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
