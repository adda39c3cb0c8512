import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { MachineIdLostError, MachineIdReleasedError } from '../errors.js';
import { MachineIdHolder } from '../machine/machine-id-holder.js';

export interface MachineIdHealthCheckOptions {
  /**
   * Down when the lease has less than this many milliseconds left. Default: the lease less three
   * heartbeats, so that a store that stopped answering turns readiness down after three missed
   * heartbeats, long before the lease is lost; `0`: down only once IDs can no longer be issued.
   */
  minRemainingMs?: number;
}

/** What the indicator reports, up or down. */
export interface MachineIdHealthDetails extends Record<string, unknown> {
  /** True while IDs may be issued under `machineId`. */
  held: boolean;
  /** The machine ID held, or the one lost or released. */
  machineId: number;
  namespace: string;
  instanceId: string;
  /** Milliseconds left on the lease (`null`: a machine ID that never expires, such as a fixed number). */
  remainingMs: number | null;
  /** A heartbeat found the ID taken by another instance; a new one is being acquired. */
  lost: boolean;
}

/**
 * `@nestjs/terminus` indicator of the machine ID that `IdGeneratorModule` holds. Reads the
 * holder's state, sends nothing: down when the ID was lost (and is being replaced), the lease
 * ran out (no heartbeat got through for the distributor's `safeGuardMs`, less a margin), or it
 * was released (shutdown), or when less than `minRemainingMs` is left. Provide it in a module
 * that imports `TerminusModule`.
 */
@Injectable()
export class MachineIdHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly health: HealthIndicatorService,
    @Inject(MachineIdHolder) private readonly holder: MachineIdHolder,
  ) {}

  async isHealthy<const Key extends string = 'machine-id'>(
    key: Key = 'machine-id' as Key,
    options: MachineIdHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const { holder } = this;
    const lease = holder.lease;
    const ended = lease.endedBy;
    const remaining = lease.remainingMs;
    const lost = holder.replacing || ended instanceof MachineIdLostError;
    const details: MachineIdHealthDetails = {
      held: false,
      machineId: holder.machineId,
      namespace: holder.namespace,
      instanceId: holder.instanceId,
      remainingMs: Number.isFinite(remaining) ? Math.round(remaining) : null,
      lost,
    };
    if (ended instanceof MachineIdReleasedError)
      return session.down({ ...details, message: `machine ID ${holder.machineId} was released` });
    if (lost) {
      return session.down({
        ...details,
        message: `machine ID ${holder.machineId} was lost to another instance; acquiring a new one`,
      });
    }
    if (!lease.valid) {
      return session.down({
        ...details,
        message: `the lease of machine ID ${holder.machineId} ran out: no heartbeat reached the distributor in time`,
      });
    }
    const minRemainingMs = options.minRemainingMs ?? defaultMinRemaining(lease.durationMs, holder.heartbeatIntervalMs);
    if (remaining < minRemainingMs) {
      return session.down({
        ...details,
        message: `the lease of machine ID ${holder.machineId} has ${Math.round(remaining)} ms left, less than ${minRemainingMs}: heartbeats are failing`,
      });
    }
    return session.up({ ...details, held: true });
  }
}

/** The lease less three heartbeats (0 for a lease that never ends or has no heartbeat). */
function defaultMinRemaining(leaseMs: number, heartbeatMs: number | undefined): number {
  if (!Number.isFinite(leaseMs) || heartbeatMs === undefined) return 0;
  return Math.max(0, leaseMs - 3 * heartbeatMs);
}
