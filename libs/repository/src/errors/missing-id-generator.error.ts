import { RepositoryError } from './repository.error.js';

/** `insert` of an aggregate without an ID while no ID generator is configured. */
export class MissingIdGeneratorError extends RepositoryError {
  override readonly code = 'MISSING_ID_GENERATOR';

  constructor(readonly aggregate: string) {
    super(
      `${aggregate} has no id and the repository has no ID generator: import ` +
        'IdGeneratorModule.forRoot(...) from @ddd-kit/id-generator (and decorate the class with @Aggregate), ' +
        'pass { idGenerators } to the repository, or assign an id before insert.',
    );
  }
}
