// The lease on its two clocks, and where generators check it: after the clock reading that
// starts a new millisecond. Both clocks are injected, so a pause can happen exactly where the
// test wants it.
import { describe, expect, it } from '@jest/globals';
import { MachineIdLeaseExpiredError, MachineIdLostError } from '../errors.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import { SafeJsSnowflakeId } from '../generators/safe-js-snowflake-id.js';
import { SnowflakeId } from '../generators/snowflake-id.js';
import type { TimeBasedIdGenerator } from '../id-generator.interfaces.js';
import { MachineIdLease } from './machine-id-lease.js';

const START = Date.UTC(2026, 0, 1);

/** A process's two clocks: `stopFor(ms)` moves both (SIGSTOP), `suspend(ms)` only the wall clock (a suspended VM). */
class ProcessClocks {
  monotonicMs = 1_000;
  wallMs = START;
  readonly monotonic = (): number => this.monotonicMs;
  readonly wall = (): number => this.wallMs;
  stopFor(ms: number): void {
    this.monotonicMs += ms;
    this.wallMs += ms;
  }
  suspend(ms: number): void {
    this.wallMs += ms;
  }
}

describe('MachineIdLease', () => {
  it('ends at the earlier of its two clocks: the monotonic one (a wall clock stepped back cannot stretch it)…', () => {
    const clocks = new ProcessClocks();
    const lease = new MachineIdLease(
      3,
      1_000,
      { monotonic: clocks.monotonicMs, wall: clocks.wallMs },
      { clock: clocks.wall, monotonic: clocks.monotonic },
    );
    clocks.monotonicMs += 999;
    clocks.wallMs -= 60_000; // NTP stepped the wall clock back
    expect(() => lease.check()).not.toThrow();
    clocks.monotonicMs += 1;
    expect(() => lease.check()).toThrow(MachineIdLeaseExpiredError);
    expect(lease.valid).toBe(false);
  });

  it('…and the wall one (a suspended VM: the monotonic clock stood still)', () => {
    const clocks = new ProcessClocks();
    const lease = new MachineIdLease(
      3,
      1_000,
      { monotonic: clocks.monotonicMs, wall: clocks.wallMs },
      { clock: clocks.wall, monotonic: clocks.monotonic },
    );
    clocks.suspend(5_000);
    expect(() => lease.check()).toThrow(/by the wall clock/);
    expect(lease.remainingMs).toBe(0);
  });

  it('a renewal counts from when its request was sent, on both clocks; a reading that is not a number never passes', () => {
    const clocks = new ProcessClocks();
    const lease = new MachineIdLease(
      3,
      1_000,
      { monotonic: clocks.monotonicMs, wall: clocks.wallMs },
      { clock: clocks.wall, monotonic: clocks.monotonic },
    );
    const sent = lease.now();
    clocks.stopFor(900); // the reply took 900 ms
    lease.renew(sent);
    clocks.stopFor(150);
    expect(() => lease.check()).toThrow(MachineIdLeaseExpiredError); // 1,050 ms after the send
    const broken = new MachineIdLease(
      3,
      1_000,
      { monotonic: 0, wall: START },
      { clock: () => NaN, monotonic: () => 0 },
    );
    expect(() => broken.check()).toThrow(MachineIdLeaseExpiredError);
  });

  it('revoked for good: later renewals change nothing', () => {
    const lease = new MachineIdLease(3, 1_000);
    lease.revoke(new MachineIdLostError('n', 3, 'i'));
    lease.renew(lease.now());
    expect(() => lease.check()).toThrow(MachineIdLostError);
    expect(lease.endedBy).toBeInstanceOf(MachineIdLostError);
  });
});

describe.each([
  [
    'CosIdGenerator',
    (clock: () => number, lease: MachineIdLease) => new CosIdGenerator({ machineId: 3, clock, lease }),
  ],
  ['SnowflakeId', (clock: () => number, lease: MachineIdLease) => new SnowflakeId({ machineId: 3, clock, lease })],
  [
    'SafeJsSnowflakeId',
    (clock: () => number, lease: MachineIdLease) => new SafeJsSnowflakeId({ machineId: 3, clock, lease }),
  ],
] as Array<[string, (clock: () => number, lease: MachineIdLease) => TimeBasedIdGenerator]>)(
  '%s checks the lease after reading the clock',
  (_name, make) => {
    function setUp() {
      const clocks = new ProcessClocks();
      const lease = new MachineIdLease(
        3,
        1_000,
        { monotonic: clocks.monotonicMs, wall: clocks.wallMs },
        { clock: clocks.wall, monotonic: clocks.monotonic },
      );
      let onNextRead: ((c: ProcessClocks) => void) | undefined;
      // The generator's clock is the process's wall clock; a stop may strike while it is read.
      const clock = (): number => {
        const reading = clocks.wall();
        const strike = onNextRead;
        onNextRead = undefined;
        strike?.(clocks);
        return reading;
      };
      const generator = make(clock, lease);
      return { clocks, generator, whileReading: (p: (c: ProcessClocks) => void) => (onNextRead = p) };
    }

    it('a process stopped (SIGSTOP) right after reading the clock for a new millisecond issues nothing on resuming', () => {
      const { clocks, generator, whileReading } = setUp();
      generator.generate();
      clocks.stopFor(1);
      whileReading((c) => c.stopFor(5_000)); // read at t, resumed at t + 5 s: the ID may have moved meanwhile
      expect(() => generator.generate()).toThrow(MachineIdLeaseExpiredError);
    });

    it('a suspended VM (wall clock jumps, monotonic clock stood still) issues nothing on resuming', () => {
      const { clocks, generator, whileReading } = setUp();
      generator.generate();
      clocks.stopFor(1);
      whileReading((c) => c.suspend(5_000));
      expect(() => generator.generate()).toThrow(MachineIdLeaseExpiredError);
    });

    it('within the lease, a new millisecond passes', () => {
      const { clocks, generator } = setUp();
      generator.generate();
      clocks.stopFor(500);
      expect(() => generator.generate()).not.toThrow();
    });
  },
);
