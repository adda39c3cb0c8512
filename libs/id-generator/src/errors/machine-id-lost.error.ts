import { IdGeneratorError } from './id-generator.error.js';

/**
 * This instance no longer holds its machine ID: it was silent for longer than its own
 * safe-guard period and another instance took the ID over. Generating more IDs with it could
 * duplicate theirs, so generation under that ID stops for good; MachineIdHolder acquires a new
 * machine ID and the module's generators switch to it.
 */
export class MachineIdLostError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_LOST';

  constructor(
    readonly namespace: string,
    readonly machineId: number,
    readonly instanceId: string,
  ) {
    super(
      `Machine ID ${machineId} of namespace "${namespace}" is no longer held by instance "${instanceId}" ` +
        '(it was reclaimed after a silence longer than its safeGuardMs); no more IDs are issued under it',
    );
  }
}
