import { InvalidAggregateIdError } from '../errors/invalid-aggregate-id.error.js';
import type { AggregateId } from './aggregate.interfaces.js';

/** Longest string ID accepted; far above any generator's output, far below a document limit. */
export const MAX_ID_LENGTH = 1024;

/** `undefined`, `null` and `''` mean "not assigned yet": `insert` fills them from the ID generator. */
export function isEmptyId(id: unknown): boolean {
  return id === undefined || id === null || id === '';
}

/**
 * Accepts a non-empty string (up to MAX_ID_LENGTH) or a finite number, and throws
 * InvalidAggregateIdError for anything else. Every read and write passes its ID through here
 * first, which is what lets the stores use IDs as plain filter values.
 */
export function assertAggregateId(aggregate: string, id: unknown): asserts id is AggregateId {
  if (typeof id === 'string') {
    if (id.length === 0) throw new InvalidAggregateIdError(aggregate, id, 'it is empty');
    if (id.length > MAX_ID_LENGTH)
      throw new InvalidAggregateIdError(aggregate, id, `it is longer than ${MAX_ID_LENGTH} characters`);
    return;
  }
  if (typeof id === 'number') {
    if (!Number.isFinite(id)) throw new InvalidAggregateIdError(aggregate, id, 'a numeric id must be finite');
    return;
  }
  throw new InvalidAggregateIdError(aggregate, id, 'an id must be a non-empty string or a finite number');
}
