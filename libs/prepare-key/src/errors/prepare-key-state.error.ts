/**
 * A key change found the old key no longer held by the old value (it was rolled back,
 * re-prepared by another owner, or never held). The new key it had just taken has been
 * released before this error is raised.
 */
export class PrepareKeyStateError extends Error {
  override readonly name = 'PrepareKeyStateError';

  constructor(
    readonly prepareKeyName: string,
    readonly oldKey: string,
    readonly newKey: string,
  ) {
    super(
      `PrepareKey '${prepareKeyName}': key '${oldKey}' is not held by the expected old value; ` +
        `key change to '${newKey}' was abandoned and '${newKey}' released`,
    );
  }
}
