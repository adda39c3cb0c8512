import { Logger } from '@nestjs/common';
import { checkReading } from '../clock/clock.utils.js';
import { IdGeneratorError, MachineIdLostError, MachineIdReleasedError } from '../errors.js';
import type { Clock } from '../id-generator.interfaces.js';
import {
  generatorTelemetry,
  machineIdTelemetry,
  noMetric,
  recordMachineIdLoss,
  renewals,
} from '../telemetry/id-generator.telemetry.js';
import type { MachineIdDistributor, MachineIdRequest, MachineIdState } from './machine-id-distributor.js';
import { leaseInstant, MachineIdLease, type LeaseInstant, type MachineIdLeaseClocks } from './machine-id-lease.js';

export interface MachineIdHolderOptions extends MachineIdRequest {
  distributor: MachineIdDistributor;
  /** Wall clock: the timestamps reported to the distributor, and the lease's second clock; default Date.now. */
  clock?: Clock;
  /** Monotonic clock of the lease; default `performance.now()` (injectable for tests). */
  monotonic?: () => number;
  logger?: Pick<Logger, 'log' | 'warn' | 'error'>;
}

/** One machine ID as held: what generators on it are built from. */
export interface HeldMachineId {
  readonly machineId: number;
  /** IDs under this machine ID must be later than this millisecond. */
  readonly lastTimestamp: number;
  /** Checked by generators; ends when the ID is lost or released. */
  readonly lease: MachineIdLease;
}

/** The part of a generator the holder reads to report how far its IDs have gone. */
interface Tracked {
  readonly lastTimestamp: number;
}

interface Held extends HeldMachineId {
  readonly tracked: Set<Tracked>;
}

/**
 * One instance's machine ID for its lifetime: distributes it, keeps it with heartbeats (`guard`
 * every `guardIntervalMs`), and on `release()` stops generation first and then gives the ID back
 * with the latest timestamp used, so the next holder starts after it.
 *
 * The lease stops generation a little before the deadline the distributor recorded for this
 * instance (`safeGuardMs` after the last successful request, less a tenth, at most 1 s), counted
 * on the monotonic and the wall clock. When a heartbeat finds the ID taken (MachineIdLostError:
 * this process was paused, suspended or cut off for longer than its lease), the old lease ends
 * for good, a new machine ID is acquired (retrying while none is free or the store is down), and
 * `onMachineId` listeners — the module's generators — move to it. Nothing is ever issued under
 * the old ID again.
 */
export class MachineIdHolder {
  private held: Held;
  private readonly clock: Clock;
  private readonly clocks: MachineIdLeaseClocks;
  private readonly logger: Pick<Logger, 'log' | 'warn' | 'error'>;
  private readonly listeners = new Set<(held: HeldMachineId) => void | Promise<void>>();
  private readonly waiters = new Set<() => void>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight: Promise<void> | undefined;
  private reacquiring: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private released = false;

  private constructor(
    private readonly options: MachineIdHolderOptions,
    machineId: number,
    lastTimestamp: number,
    leaseStartedAt: LeaseInstant,
  ) {
    this.clock = options.clock ?? Date.now;
    this.clocks = { clock: this.clock, monotonic: options.monotonic };
    this.logger = options.logger ?? new Logger('IdGeneratorModule');
    this.held = this.hold(machineId, lastTimestamp, leaseStartedAt);
  }

  /** Distributes a machine ID and starts its heartbeat. */
  static async acquire(options: MachineIdHolderOptions): Promise<MachineIdHolder> {
    const { distributor, namespace, machineBits, instanceId } = options;
    const sentAt = leaseInstant({ clock: options.clock, monotonic: options.monotonic });
    const { machineId, lastTimestamp } = await distribute(distributor, { namespace, machineBits, instanceId });
    const holder = new MachineIdHolder(options, machineId, lastTimestamp, sentAt);
    holder.startHeartbeat();
    return holder;
  }

  /** The machine ID held now (it changes only when a lost one is replaced). */
  get machineId(): number {
    return this.held.machineId;
  }

  /** The floor the distributor gave with the current machine ID: IDs only after this millisecond. */
  get lastTimestamp(): number {
    return this.held.lastTimestamp;
  }

  /** The lease of the current machine ID. */
  get lease(): MachineIdLease {
    return this.held.lease;
  }

  /** The current machine ID, its floor and its lease together. */
  get current(): HeldMachineId {
    return this.held;
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

  /** True while a lost machine ID is being replaced. */
  /** How often the lease is renewed (undefined: a machine ID that needs no heartbeat). */
  get heartbeatIntervalMs(): number | undefined {
    return this.options.distributor.guardIntervalMs;
  }

  get replacing(): boolean {
    return this.reacquiring !== undefined;
  }

  /** Generators on the current machine ID whose last timestamp must be reported. */
  track(generator: Tracked): void {
    this.held.tracked.add(generator);
  }

  /**
   * Called with each machine ID acquired in place of a lost one, before IDs may be issued under
   * it (an async listener is awaited). Returns the unsubscribe function.
   */
  onMachineId(listener: (held: HeldMachineId) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The latest millisecond any ID under the current machine ID may carry so far. */
  reportedTimestamp(): number {
    return this.latestOf(this.held);
  }

  /**
   * Resolves true as soon as IDs may be issued (the lease renewed, or a lost ID replaced and the
   * generators moved), false after `timeoutMs` or once released.
   */
  async whenUsable(timeoutMs: number): Promise<boolean> {
    const deadline = this.clocksNow().monotonic + timeoutMs;
    for (;;) {
      if (this.released) return false;
      if (this.reacquiring === undefined && this.held.lease.valid) return true;
      const left = deadline - this.clocksNow().monotonic;
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
  }

  /** One heartbeat (also run by the timer). Resolves either way; a lost ID is replaced. */
  heartbeat(): Promise<void> {
    if (this.released) return Promise.resolve();
    if (this.reacquiring) return this.reacquiring;
    this.inFlight ??= this.guardOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /**
   * Stops the heartbeat, ends generation, and gives the ID back (false: it was no longer held);
   * then closes what the distributor opened of its own.
   */
  async release(): Promise<boolean> {
    if (this.released) return false;
    this.released = true;
    const distributor = this.options.distributor as Partial<MachineIdDistributor>;
    try {
      return await this.giveBack();
    } finally {
      await distributor.close?.().catch(() => undefined);
    }
  }

  private async giveBack(): Promise<boolean> {
    this.stopHeartbeat();
    this.wake?.();
    this.notify();
    this.held.lease.revoke(new MachineIdReleasedError(this.held.machineId));
    await this.inFlight?.catch(() => undefined);
    await this.reacquiring?.catch(() => undefined);
    // A replacement may have been installed meanwhile (one acquired after this point was given
    // back by the loop itself); a lost ID without a replacement has nothing to give back.
    const held = this.held;
    held.lease.revoke(new MachineIdReleasedError(held.machineId));
    if (held.lease.endedBy instanceof MachineIdLostError) return false;
    const state = this.state(held);
    const telemetry = machineIdTelemetry.begin('machine_id.release', noMetric, 'release', this.namespace);
    const reverting = this.options.distributor.revert(state);
    const released = await (telemetry === undefined
      ? reverting
      : telemetry.settle(reverting, (done) => (done ? 'released' : 'not_held')));
    if (released) {
      this.logger.log(
        `Machine ID ${held.machineId} of namespace "${this.namespace}" released by instance "${this.instanceId}" (IDs issued up to ${state.lastTimestamp})`,
      );
    } else {
      this.logger.warn(
        `Machine ID ${held.machineId} of namespace "${this.namespace}" was no longer held by instance "${this.instanceId}" when released`,
      );
    }
    return released;
  }

  private hold(machineId: number, lastTimestamp: number, startedAt: LeaseInstant): Held {
    const safeGuardMs = this.options.distributor.safeGuardMs;
    const leaseMs = safeGuardMs === undefined ? Infinity : safeGuardMs - Math.min(1_000, safeGuardMs / 10);
    return {
      machineId,
      lastTimestamp,
      lease: new MachineIdLease(machineId, leaseMs, startedAt, this.clocks),
      tracked: new Set(),
    };
  }

  private clocksNow(): LeaseInstant {
    return leaseInstant(this.clocks);
  }

  private latestOf(held: Held): number {
    let latest = Math.max(checkReading(this.clock()), held.lastTimestamp);
    for (const generator of held.tracked) if (generator.lastTimestamp > latest) latest = generator.lastTimestamp;
    return latest;
  }

  private state(held: Held): MachineIdState {
    const { namespace, machineBits, instanceId } = this.options;
    return { namespace, machineBits, instanceId, machineId: held.machineId, lastTimestamp: this.latestOf(held) };
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private async guardOnce(): Promise<void> {
    const held = this.held;
    const sentAt = this.clocksNow();
    const telemetry = machineIdTelemetry.begin('machine_id.renew', renewals, 'renew', this.namespace);
    generatorTelemetry.instruments(); // the ID counter, for an SDK started after the generators were built
    try {
      await this.options.distributor.guard(this.state(held));
      held.lease.renew(sentAt);
      telemetry?.end('renewed');
      this.notify();
    } catch (error) {
      telemetry?.end(error instanceof MachineIdLostError ? 'lost' : 'error', error);
      if (error instanceof MachineIdLostError) {
        recordMachineIdLoss(this.namespace);
        held.lease.revoke(error);
        this.logger.error(`${error.message}; acquiring a new machine ID`);
        this.reacquiring = this.reacquire(held).finally(() => {
          this.reacquiring = undefined;
          this.notify();
        });
      } else {
        this.logger.warn(
          `Heartbeat for machine ID ${held.machineId} failed (${error instanceof Error ? error.message : String(error)}); ` +
            `ID generation stops in ${Math.round(held.lease.remainingMs)} ms unless a heartbeat succeeds`,
        );
      }
    }
  }

  /** Replaces a lost machine ID; retries (backing off up to safeGuardMs) until it succeeds or the holder is released. */
  private async reacquire(lost: Held): Promise<void> {
    const { distributor, namespace, machineBits, instanceId } = this.options;
    const interval = distributor.guardIntervalMs ?? 1_000;
    let delay = interval;
    while (!this.released) {
      const sentAt = this.clocksNow();
      try {
        const { machineId, lastTimestamp } = await distribute(distributor, { namespace, machineBits, instanceId });
        // The replacement's IDs follow the lost one's: per-generator order survives the move.
        const held = this.hold(
          machineId,
          Math.max(lastTimestamp, lost.lastTimestamp, this.latestTracked(lost)),
          sentAt,
        );
        if (this.released) {
          await distributor.revert(this.state(held)).catch(() => undefined);
          return;
        }
        this.held = held;
        const moved = await Promise.allSettled([...this.listeners].map(async (listener) => listener(held)));
        for (const result of moved) {
          if (result.status === 'rejected')
            this.logger.error(`A generator could not move to machine ID ${machineId}: ${describe(result.reason)}`);
        }
        this.logger.log(
          `Machine ID ${machineId} of namespace "${namespace}" acquired by instance "${instanceId}" in place of lost machine ID ${lost.machineId}`,
        );
        return;
      } catch (error) {
        this.logger.warn(
          `Acquiring a machine ID in place of lost machine ID ${lost.machineId} failed (${describe(error)}); retrying in ${delay} ms`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        timer.unref?.();
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      delay = Math.min(delay * 2, distributor.safeGuardMs ?? 60_000);
    }
  }

  private latestTracked(held: Held): number {
    let latest = -1;
    for (const generator of held.tracked) if (generator.lastTimestamp > latest) latest = generator.lastTimestamp;
    return latest;
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

/** distributor.distribute in a `machine_id.acquire` span. */
function distribute(
  distributor: MachineIdDistributor,
  request: MachineIdRequest,
): ReturnType<MachineIdDistributor['distribute']> {
  const telemetry = machineIdTelemetry.begin('machine_id.acquire', noMetric, 'acquire', request.namespace);
  const distributed = distributor.distribute(request);
  return telemetry === undefined ? distributed : telemetry.settle(distributed, () => 'acquired');
}

function describe(error: unknown): string {
  return error instanceof IdGeneratorError || error instanceof Error ? error.message : String(error);
}
