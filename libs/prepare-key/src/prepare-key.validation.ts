import { PrepareKeyArgumentError } from './errors/prepare-key-argument.error.js';

export const MAX_KEY_LENGTH = 1024;

/**
 * A key is only ever a non-empty, well-formed string of at most 1,024 characters. Anything
 * else — notably an object such as { "$ne": null } arriving from a request body — is
 * refused here, before a backend could turn it into a query.
 */
export function assertKey(key: unknown, what = 'key'): asserts key is string {
  if (typeof key !== 'string') {
    throw new PrepareKeyArgumentError(`${what} must be a string, got ${key === null ? 'null' : typeof key}`);
  }
  if (key.length === 0) throw new PrepareKeyArgumentError(`${what} must not be empty`);
  // Count code points, not UTF-16 units, so the limit means "characters" for any script.
  if (key.length > MAX_KEY_LENGTH && [...key].length > MAX_KEY_LENGTH) {
    throw new PrepareKeyArgumentError(`${what} must be at most ${MAX_KEY_LENGTH} characters`);
  }
  // A lone surrogate would be replaced when stored as UTF-8 and could collide with another key.
  if (!key.isWellFormed()) throw new PrepareKeyArgumentError(`${what} must be well-formed Unicode`);
}

export function assertTtlAt(ttlAt: unknown): asserts ttlAt is number {
  if (typeof ttlAt !== 'number' || !Number.isSafeInteger(ttlAt)) {
    throw new PrepareKeyArgumentError(`ttlAt must be a finite integer (epoch milliseconds), got ${String(ttlAt)}`);
  }
}

export function assertName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 120 || !name.isWellFormed()) {
    throw new PrepareKeyArgumentError(`a PrepareKey name must be a non-empty string of at most 120 characters`);
  }
}
