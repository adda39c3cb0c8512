import { IdGeneratorError } from './id-generator.error.js';

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
