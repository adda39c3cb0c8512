import { IdGeneratorError } from './id-generator.error.js';

/**
 * No heartbeat has reached the distributor for longer than the lease allows (by the monotonic or
 * the wall clock): another instance may be about to take this machine ID over, so no ID is
 * issued until a heartbeat succeeds (or, if the ID was taken meanwhile, a new one is acquired).
 */
export class MachineIdLeaseExpiredError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_LEASE_EXPIRED';

  constructor(
    readonly machineId: number,
    silentForMs: number,
    clock: 'monotonic clock' | 'wall clock' = 'monotonic clock',
  ) {
    super(
      `Machine ID ${machineId}: no heartbeat succeeded for ${Number.isFinite(silentForMs) ? Math.round(silentForMs) : String(silentForMs)} ms ` +
        `by the ${clock}, so its lease expired and IDs are not issued until the distributor (e.g. Redis, PostgreSQL) answers again`,
    );
  }
}
