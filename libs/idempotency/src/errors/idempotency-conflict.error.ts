import { DddKitError } from '@ddd-kit/core';

/**
 * The key is retained for another request (its fingerprint differs): a client reused a key for
 * a different command. Nothing ran. HTTP 422 (the IETF Idempotency-Key draft's answer).
 */
export class IdempotencyConflictError extends DddKitError {
  override readonly code = 'IDEMPOTENCY_CONFLICT';

  constructor(message = 'this idempotency key was already used for another request') {
    super(message);
  }
}
