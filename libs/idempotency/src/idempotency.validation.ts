import { keyProblem } from '@ddd-kit/core/internal';
import { IdempotencyArgumentError } from './errors.js';
import type { IdempotencyRequest } from './idempotency.interfaces.js';

export { MAX_KEY_LENGTH } from '@ddd-kit/core/internal';
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_LEASE_MS = 60_000;

/** A key or fingerprint no store can hold is refused (see keyProblem), before any store is touched. */
function assertText(value: unknown, what: string): asserts value is string {
  const problem = keyProblem(value);
  if (problem !== undefined) throw new IdempotencyArgumentError(`${what} ${problem}`);
}

/** A positive whole number of milliseconds. */
export function assertDuration(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new IdempotencyArgumentError(
      `${what} must be a positive integer number of milliseconds, got ${String(value)}`,
    );
  }
}

/** Checks a request and its work before a store is touched; resolves the ttl to use. */
export function checkRequest(request: unknown, work: unknown, defaultTtlMs: number): { ttlMs: number } {
  if (request === null || typeof request !== 'object') {
    throw new IdempotencyArgumentError('run needs a request { key, fingerprint, ttlMs? }');
  }
  const { key, fingerprint, ttlMs = defaultTtlMs } = request as Partial<IdempotencyRequest>;
  assertText(key, 'key');
  assertText(fingerprint, 'fingerprint');
  assertDuration(ttlMs, 'ttlMs');
  if (typeof work !== 'function') throw new IdempotencyArgumentError('run needs a function to run (work)');
  return { ttlMs };
}

/**
 * The stored form of a result: JSON of `{ v: result }`, so that `undefined` (a handler with
 * nothing to return) round-trips too. A value JSON cannot encode is refused.
 */
export function encodeResult(result: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify({ v: result });
  } catch (error) {
    throw new IdempotencyArgumentError(`the result of the work is no JSON value: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return text;
}

export function decodeResult<R>(text: string): R {
  return (JSON.parse(text) as { v: R }).v;
}
