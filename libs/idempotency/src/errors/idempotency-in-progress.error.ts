import { DddKitError } from '@ddd-kit/core';

/**
 * The first request with this key has not finished (or its outcome is unknown and its lease has
 * not ended): nothing ran. Retry later. HTTP 409.
 */
export class IdempotencyInProgressError extends DddKitError {
  override readonly code = 'IDEMPOTENCY_IN_PROGRESS';

  constructor(message = 'a request with this idempotency key is still in progress') {
    super(message);
  }
}
