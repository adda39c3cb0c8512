import { IdGeneratorError } from './id-generator.error.js';

/**
 * The machine-ID store could not be used at start-up: the module's own Redis client could not
 * connect, or the distributor failed while acquiring the ID. The message names the step and what
 * to check; `cause` is the driver's error.
 */
export class MachineIdStoreError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_STORE';
}
