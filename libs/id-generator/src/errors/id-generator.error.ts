import { DddKitError } from '@ddd-kit/core';

/** Base class of every error this library throws, so callers can catch them as one family. */
export class IdGeneratorError extends DddKitError {
  override readonly code: string = 'ID_GENERATOR';
}
