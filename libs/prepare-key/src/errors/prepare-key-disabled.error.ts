import { DddKitError } from '@ddd-kit/core';

/**
 * Raised by every operation of a key while PrepareKeyModule runs with `enabled: false`:
 * the key is injectable (so the application still boots) but no backend serves it.
 */
export class PrepareKeyDisabledError extends DddKitError {
  override readonly code = 'PREPARE_KEY_DISABLED';

  constructor(readonly keyName: string) {
    super(
      `PrepareKey '${keyName}' is disabled: PrepareKeyModule was configured with enabled: false, so no backend ` +
        `serves it and nothing is reserved. Set enabled: true (the default) and configure a factory to use it.`,
    );
  }
}
