import { DddKitTypeError } from '@ddd-kit/core';

/**
 * Bad input to `run` or to a store's options (key, fingerprint, ttlMs, a result that is no JSON
 * value). Raised before the store is touched, except for the result (see IdempotencyStore.run).
 */
export class IdempotencyArgumentError extends DddKitTypeError {
  override readonly code = 'IDEMPOTENCY_ARGUMENT';
}
