// Every error class of @ddd-kit/idempotency; each is a DddKitError with a stable `code`
// (IdempotencyArgumentError is a TypeError too).
import { DddKitError, DddKitTypeError } from '@ddd-kit/core';

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

/**
 * Bad input to `run` or to a store's options (key, fingerprint, ttlMs, a result that is no JSON
 * value). Raised before the store is touched, except for the result (see IdempotencyStore.run).
 */
export class IdempotencyArgumentError extends DddKitTypeError {
  override readonly code = 'IDEMPOTENCY_ARGUMENT';
}

/**
 * The first request with this key ran and its response was kept, but this server cannot read
 * its sealed fields (they were encrypted under another `encryptionKey`: instances sharing a store
 * must share the key). Nothing ran again; the response cannot be replayed here.
 */
export class IdempotencyResultUnreadableError extends DddKitError {
  override readonly code = 'IDEMPOTENCY_RESULT_UNREADABLE';

  constructor(options?: { cause?: unknown }) {
    super('the kept response of this idempotency key cannot be unsealed with this encryptionKey', options);
  }
}
