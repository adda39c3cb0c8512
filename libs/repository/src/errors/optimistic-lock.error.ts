import { RepositoryError } from './repository.error.js';

/**
 * A conditional write (`WHERE version = expectedVersion`) matched nothing: the aggregate was
 * changed or removed since it was loaded. Nothing was written and nothing was published.
 * Reload it and replay the command (`retryOnConflict` does exactly that), or report a conflict.
 */
export class OptimisticLockError extends RepositoryError {
  override readonly code = 'OPTIMISTIC_LOCK';

  constructor(
    /** The aggregate's name (its `@Aggregate` name, else its class name). */
    readonly aggregate: string,
    readonly id: unknown,
    /** The version the write expected to find (the aggregate's `oldVersion`, or the `expectedVersion` it was given). */
    readonly expectedVersion: number,
    /**
     * The version the aggregate was at when last read, when the write knows it: an
     * `expectedVersion` stated for an aggregate loaded at another version. Undefined when the
     * store's conditional write matched nothing (it may have changed, or be gone).
     */
    readonly currentVersion?: number,
  ) {
    super(
      `${aggregate} ${JSON.stringify(id)} is no longer at version ${expectedVersion}` +
        (currentVersion === undefined ? '' : ` (it was read at version ${currentVersion})`) +
        ': it was changed or removed since it was loaded. Reload it and replay the command (see retryOnConflict).',
    );
  }
}
