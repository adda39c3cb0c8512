import { IdGeneratorError } from './id-generator.error.js';

/** `generateGlobalId()` was called before any IdGeneratorModule finished initialising. */
export class NotInitializedGlobalIdGeneratorError extends IdGeneratorError {
  constructor() {
    super(
      'The global ID generator is not initialised: import IdGeneratorModule.forRoot(...) (or forRootAsync) and call ' +
        'generateGlobalId() only after the application has initialised (or inject GlobalIdGenerator)',
    );
  }
}
