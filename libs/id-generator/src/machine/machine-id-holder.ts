import { Logger } from '@nestjs/common';
import { monotonicNow } from '../clock/clock.utils.js';
import { MachineIdLostError } from '../errors/machine-id-lost.error.js';
import { MachineIdReleasedError } from '../errors/machine-id-released.error.js';
import type { Clock } from '../id-generator.interfaces.js';
import type { MachineIdDistributor, MachineIdRequest, MachineIdState } from './machine-id-distributor.js';
import { MachineIdLease } from './machine-id-lease.js';

export interface MachineIdHolderOptions extends MachineIdRequest {
  distributor: MachineIdDistributor;
  /** Wall clock for the timestamps reported to the distributor; default Date.now. */
  clock?: Clock;
  logger?: Pick<Logger, 'log' | 'warn' | 'error'>;
}

/** The part of a generator the holder reads to report how far its IDs have gone. */
interface Tracked {
  readonly lastTimestamp: number;
}

/**
 * One instance's machine ID for its lifetime: distributes it, keeps it with heartbeats
 * (`guard` every `guardIntervalMs`), ends the lease when the distributor reports it lost, and
 * on `release()` stops generation first and then gives the ID back with the latest timestamp
 * used, so the next holder starts after it. The lease stops generation if heartbeats fail for
 * almost `safeGuardMs` (a margin of a tenth, at most 1 s, covers the last millisecond in use).
 */
export class MachineIdHolder {
  readonly lease: MachineIdLease;
  private readonly tracked = new Set<Tracked>();
  private readonly clock: Clock;
  private readonly logger: Pick<Logger, 'log' | 'warn' | 'error'>;
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight: Promise<void> | undefined;
  private released = false;

  private constructor(
    private readonly options: MachineIdHolderOptions,
    readonly machineId: number,
    /** The floor the distributor gave: IDs only after this millisecond. */
    readonly lastTimestamp: number,
    leaseStartedAt: number,
  ) {
    this.clock = options.clock ?? Date.now;
    this.logger = options.logger ?? new Logger('IdGeneratorModule');
    const safeGuardMs = options.distributor.safeGuardMs;
    const leaseMs = safeGuardMs === undefined ? Infinity : safeGuardMs - Math.min(1_000, safeGuardMs / 10);
    this.lease = new MachineIdLease(machineId, leaseMs, leaseStartedAt);
  }

  /** Distributes a machine ID and starts its heartbeat. */
  static async acquire(options: MachineIdHolderOptions): Promise<MachineIdHolder> {
    const { distributor, namespace, machineBits, instanceId } = options;
    const sentAt = monotonicNow();
    const { machineId, lastTimestamp } = await distributor.distribute({ namespace, machineBits, instanceId });
    const holder = new MachineIdHolder(options, machineId, lastTimestamp, sentAt);
    holder.startHeartbeat();
    return holder;
  }

  get namespace(): string {
    return this.options.namespace;
  }

  get instanceId(): string {
    return this.options.instanceId;
  }

  get machineBits(): number {
    return this.options.machineBits;
  }

  /** Generators on this machine ID whose last timestamp must be reported. */
  track(generator: Tracked): void {
    this.tracked.add(generator);
  }

  /** The latest millisecond any ID under this machine ID may carry so far. */
  reportedTimestamp(): number {
    let latest = Math.max(this.clock(), this.lastTimestamp);
    for (const generator of this.tracked) if (generator.lastTimestamp > latest) latest = generator.lastTimestamp;
    return latest;
  }

  /** One heartbeat (also run by the timer). Resolves either way; a lost ID ends the lease. */
  heartbeat(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.inFlight ??= this.guardOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Stops the heartbeat, ends generation, and gives the ID back. */
  async release(): Promise<boolean> {
    if (this.released) return false;
    this.released = true;
    this.stopHeartbeat();
    this.lease.revoke(new MachineIdReleasedError(this.machineId));
    await this.inFlight?.catch(() => undefined);
    return this.options.distributor.revert(this.state());
  }

  private state(): MachineIdState {
    const { namespace, machineBits, instanceId } = this.options;
    return { namespace, machineBits, instanceId, machineId: this.machineId, lastTimestamp: this.reportedTimestamp() };
  }

  private async guardOnce(): Promise<void> {
    const sentAt = monotonicNow();
    try {
      await this.options.distributor.guard(this.state());
      this.lease.renew(sentAt);
    } catch (error) {
      if (error instanceof MachineIdLostError) {
        this.lease.revoke(error);
        this.stopHeartbeat();
        this.logger.error(error.message);
      } else {
        this.logger.warn(
          `Heartbeat for machine ID ${this.machineId} failed (${error instanceof Error ? error.message : String(error)}); ` +
            `ID generation stops in ${Math.round(this.lease.remainingMs)} ms unless a heartbeat succeeds`,
        );
      }
    }
  }

  private startHeartbeat(): void {
    const interval = this.options.distributor.guardIntervalMs;
    if (interval === undefined) return;
    this.timer = setInterval(() => void this.heartbeat(), interval);
    // The heartbeat must not keep a finished process alive.
    this.timer.unref();
  }

  private stopHeartbeat(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
