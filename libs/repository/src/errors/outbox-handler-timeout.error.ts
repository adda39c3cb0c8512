import { RepositoryError } from './repository.error.js';

/**
 * The handlers of one write's events did not settle within the relay's `handlerTimeoutMs`: the
 * delivery counts as failed (retried after a backoff, a dead letter after `maxAttempts`). The
 * late call itself is not stopped — JavaScript cannot cancel a promise — so a handler that
 * finishes afterwards has run once more than the outbox counted, which idempotent handlers allow.
 */
export class OutboxHandlerTimeoutError extends RepositoryError {
  override readonly code = 'OUTBOX_HANDLER_TIMEOUT';
}
