import { RepositoryError } from './repository.error.js';

/** An ID that is not a non-empty string or a finite number. Nothing was read or written. */
export class InvalidAggregateIdError extends RepositoryError {
  override readonly code = 'INVALID_AGGREGATE_ID';

  constructor(
    readonly aggregate: string,
    readonly id: unknown,
    reason: string,
  ) {
    super(`Invalid ${aggregate} id ${describe(id)}: ${reason}`);
  }
}

// Says what was passed without echoing a large or hostile value in full.
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  if (typeof value === 'symbol' || typeof value === 'function') return `a ${typeof value}`;
  return `${String(value)} (${typeof value})`;
}
