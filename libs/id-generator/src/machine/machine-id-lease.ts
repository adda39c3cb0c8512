import { monotonicNow } from '../clock/clock.utils.js';
import { MachineIdLeaseExpiredError } from '../errors/machine-id-lease-expired.error.js';
import type { MachineIdLeaseLike } from '../id-generator.interfaces.js';

/**
 * How long this instance may still issue IDs under its machine ID. Renewed by each successful
 * heartbeat from the moment the heartbeat was *sent* (monotonic time, unaffected by wall-clock
 * jumps), which is never later than the moment the distributor recorded it; so the lease runs
 * out before the distributor could hand the ID to anyone else. Generators check it once per
 * millisecond.
 */
export class MachineIdLease implements MachineIdLeaseLike {
  private expiresAt: number;
  private ended: Error | undefined;

  constructor(
    readonly machineId: number,
    readonly durationMs: number = Infinity,
    startedAt: number = monotonicNow(),
  ) {
    this.expiresAt = startedAt + durationMs;
  }

  /** A heartbeat sent at `sentAt` (monotonic ms) succeeded. */
  renew(sentAt: number): void {
    if (this.ended === undefined) this.expiresAt = Math.max(this.expiresAt, sentAt + this.durationMs);
  }

  /** Ends the lease for good: every later check throws `reason`. */
  revoke(reason: Error): void {
    this.ended ??= reason;
  }

  get valid(): boolean {
    return this.ended === undefined && monotonicNow() < this.expiresAt;
  }

  /** Milliseconds left (Infinity for distributors without expiry, 0 once ended). */
  get remainingMs(): number {
    if (this.ended !== undefined) return 0;
    return Math.max(0, this.expiresAt - monotonicNow());
  }

  check(): void {
    if (this.ended !== undefined) throw this.ended;
    if (this.durationMs === Infinity) return;
    const now = monotonicNow();
    if (now >= this.expiresAt) throw new MachineIdLeaseExpiredError(this.machineId, now - (this.expiresAt - this.durationMs));
  }
}
