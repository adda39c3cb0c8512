import type { Logger } from '@nestjs/common';
import { IdGeneratorError, MachineIdLostError } from '../errors.js';
import {
  generatorTelemetry,
  machineIdTelemetry,
  noMetric,
  recordMachineIdLoss,
  renewals,
} from '../telemetry/id-generator.telemetry.js';
import type { MachineIdDistributor, MachineIdRequest, MachineIdState } from './machine-id-distributor.js';
import type { LeaseInstant, MachineIdLease } from './machine-id-lease.js';

/** A machine ID as the heartbeat sees it: the number and its lease. */
export interface BeatingMachineId {
  readonly machineId: number;
  readonly lastTimestamp: number;
  readonly lease: MachineIdLease;
}

/** What the heartbeat needs of its holder (MachineIdHolder), whose lease it keeps. */
export interface MachineIdHeartbeatHost<H extends BeatingMachineId> {
  readonly distributor: MachineIdDistributor;
  readonly request: MachineIdRequest;
  readonly logger: Pick<Logger, 'log' | 'warn' | 'error'>;
  /** The machine ID held now. */
  held(): H;
  /** True once the holder released its ID: nothing more is renewed or acquired. */
  released(): boolean;
  /** Both lease clocks now: read before a request that renews the lease is sent. */
  clocksNow(): LeaseInstant;
  /** What the distributor is told of `held` (its latest timestamp included). */
  state(held: H): MachineIdState;
  /** A new ID in place of `lost`, not installed yet: its IDs follow every one issued under `lost`. */
  replacement(lost: H, machineId: number, lastTimestamp: number, sentAt: LeaseInstant): H;
  /** Installs `held` in place of the lost ID, and moves the generators to it. */
  install(held: H): Promise<void>;
  /** Wakes whoever waits for the ID to be usable (see MachineIdHolder.whenUsable). */
  notify(): void;
}

/**
 * The heartbeat of one MachineIdHolder: `guard` every `guardIntervalMs`, each success renewing
 * the lease from the moment it was sent. When a guard finds the ID taken (MachineIdLostError),
 * the lost lease ends for good and a new ID is acquired, retrying (backing off up to
 * `safeGuardMs`) while none is free or the store is down, until it succeeds or the holder is
 * released; any other failure only warns, and the lease runs out unless a later beat succeeds.
 */
export class MachineIdHeartbeat<H extends BeatingMachineId> {
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight: Promise<void> | undefined;
  private reacquiring: Promise<void> | undefined;
  /** Cuts short the wait between two attempts to replace a lost ID. */
  private wake: (() => void) | undefined;

  constructor(private readonly host: MachineIdHeartbeatHost<H>) {}

  /** True while a lost machine ID is being replaced. */
  get replacing(): boolean {
    return this.reacquiring !== undefined;
  }

  /** Starts beating every `guardIntervalMs` (a distributor without one needs no heartbeat). */
  start(): void {
    const interval = this.host.distributor.guardIntervalMs;
    if (interval === undefined) return;
    this.timer = setInterval(() => void this.beat(), interval);
    // The heartbeat must not keep a finished process alive.
    this.timer.unref();
  }

  /** Stops the timer, and a replacement's wait between attempts. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.wake?.();
  }

  /** One beat, or the replacement under way. Resolves either way; a lost ID is replaced. */
  beat(): Promise<void> {
    if (this.host.released()) return Promise.resolve();
    if (this.reacquiring) return this.reacquiring;
    this.inFlight ??= this.guardOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Resolves once the beat in flight and the replacement under way (if any) have ended. */
  async settled(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
    await this.reacquiring?.catch(() => undefined);
  }

  private async guardOnce(): Promise<void> {
    const { host } = this;
    const held = host.held();
    const sentAt = host.clocksNow();
    const namespace = host.request.namespace;
    const telemetry = machineIdTelemetry.begin('machine_id.renew', renewals, 'renew', namespace);
    generatorTelemetry.instruments(); // the ID counter, for an SDK started after the generators were built
    try {
      await host.distributor.guard(host.state(held));
      held.lease.renew(sentAt);
      telemetry?.end('renewed');
      host.notify();
    } catch (error) {
      telemetry?.end(error instanceof MachineIdLostError ? 'lost' : 'error', error);
      if (error instanceof MachineIdLostError) {
        recordMachineIdLoss(namespace);
        held.lease.revoke(error);
        host.logger.error(`${error.message}; acquiring a new machine ID`);
        this.reacquiring = this.reacquire(held).finally(() => {
          this.reacquiring = undefined;
          host.notify();
        });
      } else {
        host.logger.warn(
          `Heartbeat for machine ID ${held.machineId} failed (${error instanceof Error ? error.message : String(error)}); ` +
            `ID generation stops in ${Math.round(held.lease.remainingMs)} ms unless a heartbeat succeeds`,
        );
      }
    }
  }

  /** Replaces a lost machine ID; retries (backing off up to safeGuardMs) until it succeeds or the holder is released. */
  private async reacquire(lost: H): Promise<void> {
    const { host } = this;
    const { distributor, request } = host;
    const interval = distributor.guardIntervalMs ?? 1_000;
    let delay = interval;
    while (!host.released()) {
      const sentAt = host.clocksNow();
      try {
        const { machineId, lastTimestamp } = await distributeMachineId(distributor, request);
        const held = host.replacement(lost, machineId, lastTimestamp, sentAt);
        if (host.released()) {
          await distributor.revert(host.state(held)).catch(() => undefined);
          return;
        }
        await host.install(held);
        host.logger.log(
          `Machine ID ${machineId} of namespace "${request.namespace}" acquired by instance "${request.instanceId}" in place of lost machine ID ${lost.machineId}`,
        );
        return;
      } catch (error) {
        host.logger.warn(
          `Acquiring a machine ID in place of lost machine ID ${lost.machineId} failed (${describeError(error)}); retrying in ${delay} ms`,
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
}

/** distributor.distribute in a `machine_id.acquire` span. */
export function distributeMachineId(
  distributor: MachineIdDistributor,
  request: MachineIdRequest,
): ReturnType<MachineIdDistributor['distribute']> {
  const telemetry = machineIdTelemetry.begin('machine_id.acquire', noMetric, 'acquire', request.namespace);
  const distributed = distributor.distribute(request);
  return telemetry === undefined ? distributed : telemetry.settle(distributed, () => 'acquired');
}

export function describeError(error: unknown): string {
  return error instanceof IdGeneratorError || error instanceof Error ? error.message : String(error);
}
