import { DddKitError } from '@ddd-kit/core';

/**
 * The store that PrepareKeyModule connects to itself (`redis: { url }`) could not be reached at
 * start-up. The message names the step and what to do; `cause` is the driver's error.
 */
export class PrepareKeyConnectionError extends DddKitError {
  override readonly code = 'PREPARE_KEY_CONNECTION';
}
