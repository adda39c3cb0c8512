import { IdGeneratorError } from './id-generator.error.js';

/** The machine ID was given back (application shutdown); generators built on it issue no more IDs. */
export class MachineIdReleasedError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_RELEASED';

  constructor(readonly machineId: number) {
    super(`Machine ID ${machineId} was released (the application is shutting down); no more IDs are issued with it`);
  }
}
