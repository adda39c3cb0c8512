import { IdGeneratorError } from './id-generator.error.js';

/**
 * No heartbeat has reached the distributor for longer than the lease allows: another instance
 * may be about to take this machine ID over, so no ID is issued until a heartbeat succeeds.
 */
export class MachineIdLeaseExpiredError extends IdGeneratorError {
  constructor(
    readonly machineId: number,
    silentForMs: number,
  ) {
    super(
      `Machine ID ${machineId}: no heartbeat succeeded for ${Math.round(silentForMs)} ms, so its lease expired and IDs are ` +
        'not issued until the distributor (e.g. Redis) answers again',
    );
  }
}
