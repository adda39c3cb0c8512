/** The longest key (a reservation's, an idempotency key), in characters (code points). */
export const MAX_KEY_LENGTH = 1024;

/**
 * Why no ddd-kit store can hold `value` as a key, or undefined when every one can: it must be a
 * non-empty string of at most MAX_KEY_LENGTH characters of well-formed Unicode without U+0000.
 * The same rule on every backend, checked before any store is touched, so a key one store
 * refuses (PostgreSQL text holds no NUL; a lone surrogate has no UTF-8 form and would be
 * replaced, colliding with another key) is refused everywhere, and an object such as
 * `{ "$ne": null }` from a request body never reaches a query.
 */
export function keyProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `must be a string, got ${value === null ? 'null' : typeof value}`;
  if (value.length === 0) return 'must not be empty';
  // Count code points, not UTF-16 units, so the limit means "characters" for any script.
  if (value.length > MAX_KEY_LENGTH && [...value].length > MAX_KEY_LENGTH)
    return `must be at most ${MAX_KEY_LENGTH} characters`;
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it holds a lone surrogate)';
  if (value.includes('\u0000')) return 'must not hold U+0000 (NUL)';
  return undefined;
}
