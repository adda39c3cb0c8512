import { DddKitError } from '@ddd-kit/core';

/** Base class of every error this library throws, so callers can tell them from driver errors. */
export class RepositoryError extends DddKitError {
  override readonly code: string = 'REPOSITORY';
}
