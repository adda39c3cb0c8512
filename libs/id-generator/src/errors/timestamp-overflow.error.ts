import { IdGeneratorError } from './id-generator.error.js';

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
