import { IdGeneratorError } from './id-generator.error.js';

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
