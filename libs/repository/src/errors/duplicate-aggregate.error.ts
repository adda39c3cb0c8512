import { RepositoryError } from './repository.error.js';

/** `insert` of an ID that is already stored. Nothing was written and nothing was published. */
export class DuplicateAggregateError extends RepositoryError {
  override readonly code = 'DUPLICATE_AGGREGATE';

  constructor(
    readonly aggregate: string,
    readonly id: unknown,
    options?: ErrorOptions,
  ) {
    super(
      `${aggregate} ${JSON.stringify(id)} already exists: insert only creates; load it and update instead.`,
      options,
    );
  }
}
