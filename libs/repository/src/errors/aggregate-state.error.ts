import { RepositoryError } from './repository.error.js';

/**
 * A write that does not fit the aggregate's state: `update` or `remove` of an aggregate that
 * was never stored, `insert` of one that was, any write but `remove` of a deleted one.
 */
export class AggregateStateError extends RepositoryError {
  override readonly code = 'AGGREGATE_STATE';

  constructor(
    readonly aggregate: string,
    readonly id: unknown,
    message: string,
  ) {
    super(`${aggregate} ${JSON.stringify(id) ?? 'without id'}: ${message}`);
  }
}
