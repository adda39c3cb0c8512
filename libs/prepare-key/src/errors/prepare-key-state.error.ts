import { DddKitError } from '@ddd-kit/core';

/**
 * A key change found the old key no longer held by the old value (it was rolled back,
 * re-prepared by another owner, or never held). `newKeyReleased` says what became of the new
 * key it had just taken: released when another value holds the old key; kept when the old key
 * is free, so that the caller's reservation is not lost altogether (release it yourself, with
 * `rollback(newKey, newValue)`, if the change is abandoned).
 */
export class PrepareKeyStateError extends DddKitError {
  override readonly code = 'PREPARE_KEY_STATE';

  constructor(
    readonly prepareKeyName: string,
    readonly oldKey: string,
    readonly newKey: string,
    readonly newKeyReleased = true,
  ) {
    super(
      `PrepareKey '${prepareKeyName}': key '${oldKey}' is not held by the expected old value; ` +
        (newKeyReleased
          ? `another value holds it, so the key change to '${newKey}' was abandoned and '${newKey}' released`
          : `it is free, so '${newKey}' stays held by the new value`),
    );
  }
}
