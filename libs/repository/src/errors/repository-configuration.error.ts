import { RepositoryError } from './repository.error.js';

/** A repository or RepositoryModule set up in a way that cannot work; raised at bootstrap. */
export class RepositoryConfigurationError extends RepositoryError {
  override readonly code = 'REPOSITORY_CONFIGURATION';
}
