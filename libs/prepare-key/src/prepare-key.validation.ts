import { keyProblem } from '@ddd-kit/core/internal';
import { PrepareKeyArgumentError } from './errors.js';

export { MAX_KEY_LENGTH } from '@ddd-kit/core/internal';

/** Refuses a key no backend can hold (see keyProblem), before any backend is touched. */
export function assertKey(key: unknown, what = 'key'): asserts key is string {
  const problem = keyProblem(key);
  if (problem !== undefined) throw new PrepareKeyArgumentError(`${what} ${problem}`);
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
