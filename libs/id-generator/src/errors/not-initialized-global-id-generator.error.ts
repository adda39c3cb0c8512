import { IdGeneratorError } from './id-generator.error.js';

/** `generateGlobalId()` was called before any IdGeneratorModule finished initialising. */
export class NotInitializedGlobalIdGeneratorError extends IdGeneratorError {
  override readonly code = 'NOT_INITIALIZED_GLOBAL_ID_GENERATOR';

  constructor() {
    super(
      'The global ID generator is not initialised: import IdGeneratorModule.forRoot(...) (or forRootAsync) and call ' +
        'generateGlobalId() only after the application has initialised (or inject GlobalIdGenerator)',
    );
  }
}
