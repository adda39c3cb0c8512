import { DddKitTypeError } from '@ddd-kit/core';

/**
 * Bad input to a PrepareKey operation (key, value or ttlAt). Raised before any backend is
 * touched, so nothing has been written. A TypeError, as Node raises for bad arguments.
 */
export class PrepareKeyArgumentError extends DddKitTypeError {
  override readonly code = 'PREPARE_KEY_ARGUMENT';
}
