import { DddKitError } from '@ddd-kit/core';

/**
 * The store of a PrepareKey lost its reservations (a Redis restarted without persistence, a
 * flush, a failover to an empty node or shard), recognised by the missing seal in the same atomic
 * step as the operation: nothing was reserved, released or read. The library is restoring the
 * reservations from their owners (the restorers given to `restoreWith`, the `@UniqueKey`
 * repositories); retry once it has (an HTTP service answers 503).
 */
export class PrepareKeyDataLostError extends DddKitError {
  override readonly code = 'PREPARE_KEY_DATA_LOST';

  constructor(
    readonly prepareKeyName: string,
    options?: ErrorOptions,
  ) {
    super(
      `PrepareKey '${prepareKeyName}': the store lost its reservations (the seal is missing); ` +
        'they are being restored from their owners, retry later',
      options,
    );
  }
}
