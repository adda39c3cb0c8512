import { DddKitError } from '@ddd-kit/core';

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
