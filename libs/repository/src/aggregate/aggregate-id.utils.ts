import { InvalidAggregateIdError } from '../errors.js';
import type { AggregateId } from './aggregate.interfaces.js';

/** Longest string ID accepted; far above any generator's output, far below a document limit. */
export const MAX_ID_LENGTH = 1024;

/** `undefined`, `null` and `''` mean "not assigned yet": `insert` fills them from the ID generator. */
export function isEmptyId(id: unknown): boolean {
  return id === undefined || id === null || id === '';
}

// C0 controls and DEL: PostgreSQL refuses NUL in text, and CR/LF in an id could start a line
// of a log that prints it; refused on every backend so that all of them answer alike.
function hasControlCharacter(id: string): boolean {
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Why no store can hold this string id (too long, a control character, a lone surrogate that
 * has no UTF-8 form), or undefined when it can. Reads answer "no such aggregate" for such an id,
 * writes refuse it, before any statement.
 */
export function unstorableIdReason(id: string): string | undefined {
  if (id.length > MAX_ID_LENGTH) return `it is longer than ${MAX_ID_LENGTH} characters`;
  if (hasControlCharacter(id)) return 'it contains a control character';
  if (!id.isWellFormed()) return 'it contains a lone surrogate (not valid Unicode)';
  return undefined;
}

/**
 * Accepts a non-empty string (up to MAX_ID_LENGTH, no control characters, well-formed Unicode)
 * or a finite number, and throws InvalidAggregateIdError for anything else. Every write passes
 * its ID through here first, which is what lets the stores use IDs as plain filter values.
 */
export function assertAggregateId(aggregate: string, id: unknown): asserts id is AggregateId {
  if (typeof id === 'string') {
    if (id.length === 0) throw new InvalidAggregateIdError(aggregate, id, 'it is empty');
    const unstorable = unstorableIdReason(id);
    if (unstorable !== undefined) throw new InvalidAggregateIdError(aggregate, id, unstorable);
    return;
  }
  if (typeof id === 'number') {
    if (!Number.isFinite(id)) throw new InvalidAggregateIdError(aggregate, id, 'a numeric id must be finite');
    return;
  }
  throw new InvalidAggregateIdError(aggregate, id, 'an id must be a non-empty string or a finite number');
}

/**
 * For reads: true when `id` is a well-typed id that no store can hold, so that the answer is
 * "no such aggregate" without a statement; ids of the wrong type still throw (a caller's bug).
 */
export function isUnstorableId(aggregate: string, id: unknown): boolean {
  if (typeof id === 'string' && id.length > 0 && unstorableIdReason(id) !== undefined) return true;
  assertAggregateId(aggregate, id);
  return false;
}
