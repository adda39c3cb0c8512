import { Logger } from '@nestjs/common';
import { checkReading } from '../clock/clock.utils.js';
import { MachineIdLostError, MachineIdReleasedError } from '../errors.js';
import type { Clock } from '../id-generator.interfaces.js';
import { machineIdTelemetry, noMetric } from '../telemetry/id-generator.telemetry.js';
import type { MachineIdDistributor, MachineIdRequest, MachineIdState } from './machine-id-distributor.js';
import { describeError, distributeMachineId, MachineIdHeartbeat } from './machine-id-heartbeat.js';
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
 * every `guardIntervalMs`, see MachineIdHeartbeat), and on `release()` stops generation first and
 * then gives the ID back with the latest timestamp used, so the next holder starts after it.
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
  private readonly beats: MachineIdHeartbeat<Held>;
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
    const { distributor, namespace, machineBits, instanceId } = options;
    this.beats = new MachineIdHeartbeat<Held>({
      distributor,
      request: { namespace, machineBits, instanceId },
      logger: this.logger,
      held: () => this.held,
      released: () => this.released,
      clocksNow: () => this.clocksNow(),
      state: (held) => this.state(held),
      // The replacement's IDs follow the lost one's: per-generator order survives the move.
      replacement: (lost, id, last, sentAt) =>
        this.hold(id, Math.max(last, lost.lastTimestamp, latestTracked(lost)), sentAt),
      install: (held) => this.install(held),
      notify: () => this.notify(),
    });
  }

  /** Distributes a machine ID and starts its heartbeat. */
  static async acquire(options: MachineIdHolderOptions): Promise<MachineIdHolder> {
    const { distributor, namespace, machineBits, instanceId } = options;
    const sentAt = leaseInstant({ clock: options.clock, monotonic: options.monotonic });
    const { machineId, lastTimestamp } = await distributeMachineId(distributor, { namespace, machineBits, instanceId });
    const holder = new MachineIdHolder(options, machineId, lastTimestamp, sentAt);
    holder.beats.start();
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

  /** How often the lease is renewed (undefined: a machine ID that needs no heartbeat). */
  get heartbeatIntervalMs(): number | undefined {
    return this.options.distributor.guardIntervalMs;
  }

  /** True while a lost machine ID is being replaced. */
  get replacing(): boolean {
    return this.beats.replacing;
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
      if (!this.beats.replacing && this.held.lease.valid) return true;
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
    return this.beats.beat();
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
    this.beats.stop();
    this.notify();
    this.held.lease.revoke(new MachineIdReleasedError(this.held.machineId));
    await this.beats.settled();
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

  /** Installs a replacement for a lost ID, and moves the generators to it (onMachineId). */
  private async install(held: Held): Promise<void> {
    this.held = held;
    const moved = await Promise.allSettled([...this.listeners].map(async (listener) => listener(held)));
    for (const result of moved) {
      if (result.status === 'rejected')
        this.logger.error(
          `A generator could not move to machine ID ${held.machineId}: ${describeError(result.reason)}`,
        );
    }
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
}

/** The latest timestamp the generators on `held` reported (-1: none yet). */
function latestTracked(held: Held): number {
  let latest = -1;
  for (const generator of held.tracked) if (generator.lastTimestamp > latest) latest = generator.lastTimestamp;
  return latest;
}
