import { IdGeneratorError } from './id-generator.error.js';

/** `generateId(aggregate)` was called before any IdGeneratorModule finished initialising. */
export class NotInitializedAggregateIdGeneratorError extends IdGeneratorError {
  override readonly code = 'NOT_INITIALIZED_AGGREGATE_ID_GENERATOR';

  constructor() {
    super(
      'Aggregate ID generators are not initialised: import IdGeneratorModule.forRoot(...) (or forRootAsync) and call ' +
        'generateId() only after the application has initialised (or inject AggregateIdGeneratorRegistrar)',
    );
  }
}
