import { monotonicNow } from '../clock/clock.utils.js';
import { MachineIdLeaseExpiredError } from '../errors.js';
import type { Clock, MachineIdLeaseLike } from '../id-generator.interfaces.js';

/** The two clocks a lease is counted on, read together when a distribute or guard is sent. */
export interface LeaseInstant {
  /** Monotonic milliseconds (`performance.now()`): immune to wall-clock steps, but stops while a VM is suspended. */
  monotonic: number;
  /** Wall-clock epoch milliseconds: keeps counting across a suspended VM, but may be stepped. */
  wall: number;
}

export interface MachineIdLeaseClocks {
  /** The wall clock; default Date.now. Use the clock of the generators that check the lease. */
  clock?: Clock;
  /** The monotonic clock; default `performance.now()` (injectable for tests). */
  monotonic?: () => number;
}

/** Both clocks now (monotonic first): what a lease is counted from. */
export function leaseInstant(clocks: MachineIdLeaseClocks = {}): LeaseInstant {
  return { monotonic: (clocks.monotonic ?? monotonicNow)(), wall: (clocks.clock ?? Date.now)() };
}

/**
 * How long this instance may still issue IDs under its machine ID. Each successful distribute or
 * heartbeat renews it from the moment the request was *sent*, which is never later than the
 * moment the distributor recorded the holder's deadline; so the lease runs out before anyone
 * else could be handed the ID. It is counted on two clocks and ends at the earlier of the two:
 *  - the monotonic clock, which wall-clock steps (NTP) cannot stretch;
 *  - the wall clock, which keeps counting while a VM is suspended (the monotonic clock does not).
 * A process paused by SIGSTOP finds both past the deadline when it resumes. Generators check the
 * lease whenever they enter a new millisecond, after the clock reading that led there.
 */
export class MachineIdLease implements MachineIdLeaseLike {
  private expiresAt: number;
  private wallExpiresAt: number;
  private ended: Error | undefined;
  private readonly wallClock: Clock;
  private readonly monotonicClock: () => number;

  constructor(
    readonly machineId: number,
    readonly durationMs: number = Infinity,
    /** When the request that granted the lease was sent (a number: monotonic ms only). */
    startedAt?: number | LeaseInstant,
    clocks: MachineIdLeaseClocks = {},
  ) {
    this.wallClock = clocks.clock ?? Date.now;
    this.monotonicClock = clocks.monotonic ?? monotonicNow;
    const start =
      typeof startedAt === 'number' ? { monotonic: startedAt, wall: this.wallClock() } : (startedAt ?? this.now());
    this.expiresAt = start.monotonic + durationMs;
    this.wallExpiresAt = start.wall + durationMs;
  }

  /** Both clocks now: take this before sending a request that renews the lease. */
  now(): LeaseInstant {
    return leaseInstant({ clock: this.wallClock, monotonic: this.monotonicClock });
  }

  /** A heartbeat sent at `sentAt` succeeded (a number: monotonic ms, the wall clock read now). */
  renew(sentAt: number | LeaseInstant): void {
    if (this.ended !== undefined) return;
    const start =
      typeof sentAt === 'number'
        ? { monotonic: sentAt, wall: this.wallClock() - (this.monotonicClock() - sentAt) }
        : sentAt;
    this.expiresAt = Math.max(this.expiresAt, start.monotonic + this.durationMs);
    this.wallExpiresAt = Math.max(this.wallExpiresAt, start.wall + this.durationMs);
  }

  /** Ends the lease for good: every later check throws `reason`. */
  revoke(reason: Error): void {
    this.ended ??= reason;
  }

  /** Why the lease ended for good (lost, released), if it did. */
  get endedBy(): Error | undefined {
    return this.ended;
  }

  get valid(): boolean {
    return this.remainingMs > 0;
  }

  /** Milliseconds left by the earlier of the two clocks (Infinity for distributors without expiry, 0 once ended). */
  get remainingMs(): number {
    if (this.ended !== undefined) return 0;
    if (this.durationMs === Infinity) return Infinity;
    const left = Math.min(this.expiresAt - this.monotonicClock(), this.wallExpiresAt - this.wallClock());
    return Number.isNaN(left) ? 0 : Math.max(0, left);
  }

  check(): void {
    if (this.ended !== undefined) throw this.ended;
    if (this.durationMs === Infinity) return;
    const now = this.monotonicClock();
    if (now >= this.expiresAt)
      throw new MachineIdLeaseExpiredError(this.machineId, now - (this.expiresAt - this.durationMs));
    const wall = this.wallClock();
    // Written so that NaN fails too.
    if (!(wall < this.wallExpiresAt))
      throw new MachineIdLeaseExpiredError(this.machineId, wall - (this.wallExpiresAt - this.durationMs), 'wall clock');
  }
}
