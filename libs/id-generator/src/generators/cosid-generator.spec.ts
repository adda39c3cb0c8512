import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  ClockBackwardsError,
  ClockStalledError,
  IdGeneratorOptionsError,
  InvalidIdError,
  TimestampOverflowError,
} from '../errors.js';
import { MachineIdLease } from '../machine/machine-id-lease.js';
import { ScriptedClock, SteppingClock } from '../__tests__/test-clocks.js';
import { CosIdGenerator } from './cosid-generator.js';

const T0 = 1_750_000_000_000;
/** The default sequenceResetThreshold of CosId's 16 sequence bits. */
const RESET_THRESHOLD = 2 ** 15 - 1;

/**
 * What every run of IDs from one generator must satisfy; returns the violations (checked with
 * one expect: Jest's expect is too slow for hundreds of thousands of calls).
 */
function violationsOf(generator: CosIdGenerator, ids: string[], machineId: number, maxTimestamp: number): string[] {
  const violations: string[] = [];
  let previous: { id: string; timestamp: number; sequence: number } | undefined;
  for (const id of ids) {
    if (id.length !== 15) violations.push(`${id}: length ${id.length}`);
    const state = generator.parse(id);
    if (state.machineId !== machineId) violations.push(`${id}: machine ${state.machineId}`);
    if (state.timestamp > maxTimestamp) violations.push(`${id}: timestamp ahead of the clock`);
    if (previous) {
      if (!(id > previous.id)) violations.push(`${id} does not sort after ${previous.id}`);
      if (state.timestamp === previous.timestamp) {
        if (state.sequence !== previous.sequence + 1)
          violations.push(`${id}: sequence ${state.sequence} after ${previous.sequence} in one millisecond`);
      } else if (
        state.timestamp < previous.timestamp ||
        // A new millisecond starts at 0, or below the reset threshold where the last one left off.
        (state.sequence !== 0 && !(previous.sequence < RESET_THRESHOLD && state.sequence === previous.sequence + 1))
      ) {
        violations.push(
          `${id}: new millisecond ${state.timestamp} (after ${previous.timestamp}) starts at sequence ${state.sequence}`,
        );
      }
    }
    previous = { id, ...state };
  }
  return violations;
}

describe('CosIdGenerator', () => {
  it('IDs strictly increase as strings and parse back to (time, machine, sequence) — any machine, any non-decreasing clock', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 20 - 1 }),
        fc.integer({ min: 0, max: 2 ** 44 - 10_000 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 400 }),
        (machineId, start, steps) => {
          let t = start;
          let i = 0;
          const generator = new CosIdGenerator({ machineId, clock: () => (t += steps[i++ % steps.length]) });
          const ids = Array.from({ length: steps.length }, () => generator.generate());
          expect(violationsOf(generator, ids, machineId, t)).toEqual([]);
          expect(new Set(ids).size).toBe(ids.length);
        },
      ),
    );
  });

  it('parse round-trips every field and the layout is 8 + 4 + 3 Radix62 characters', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 20 - 1 }),
        fc.integer({ min: 0, max: 2 ** 44 - 1 }),
        (machineId, timestamp) => {
          const generator = new CosIdGenerator({ machineId, clock: () => timestamp });
          const id = generator.generate();
          expect(generator.parse(id)).toEqual({ timestamp, machineId, sequence: 0 });
          expect(CosIdGenerator.parse(id)).toEqual({ timestamp, machineId, sequence: 0 });
        },
      ),
    );
  });

  it('byte order of IDs from different machines is (time, machine, sequence) order', () => {
    fc.assert(
      fc.property(
        fc.tuple(
          fc.integer({ min: 0, max: 2 ** 44 - 1 }),
          fc.integer({ min: 0, max: 2 ** 20 - 1 }),
          fc.integer({ min: 0, max: 3 }),
        ),
        fc.tuple(
          fc.integer({ min: 0, max: 2 ** 44 - 1 }),
          fc.integer({ min: 0, max: 2 ** 20 - 1 }),
          fc.integer({ min: 0, max: 3 }),
        ),
        (a, b) => {
          const make = ([t, m, n]: [number, number, number]): string => {
            const g = new CosIdGenerator({ machineId: m, clock: () => t });
            let id = '';
            for (let k = 0; k <= n; k++) id = g.generate();
            return id;
          };
          const cmp = (x: number[], y: number[]): number => {
            for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return x[k] < y[k] ? -1 : 1;
            return 0;
          };
          const ia = make(a);
          const ib = make(b);
          expect(ia < ib ? -1 : ia > ib ? 1 : 0).toBe(cmp(a, b));
        },
      ),
    );
  });

  it('never wraps the 16-bit sequence: 200,000 IDs on a frozen-then-advancing clock are distinct and ordered, at most 65,536 per millisecond', () => {
    // The clock stands still for 90,000 readings per millisecond: more IDs are asked for
    // than one millisecond holds, so the generator must wait for the clock each time.
    const clock = new SteppingClock(T0, 90_000);
    const generator = new CosIdGenerator({ machineId: 3, clock: clock.now });
    const ids = Array.from({ length: 200_000 }, () => generator.generate());
    expect(new Set(ids).size).toBe(ids.length);
    const perMillisecond = new Map<number, number>();
    for (const id of ids) {
      const { timestamp } = generator.parse(id);
      perMillisecond.set(timestamp, (perMillisecond.get(timestamp) ?? 0) + 1);
    }
    expect(Math.max(...perMillisecond.values())).toBe(65_536);
    expect(perMillisecond.size).toBeGreaterThanOrEqual(4);
    expect(violationsOf(generator, ids, 3, Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  it('a pause after a millisecond was used up costs no sequence space: the skipped milliseconds are filled, never ahead of the clock', () => {
    let t = T0;
    const generator = new CosIdGenerator({ machineId: 4, clock: () => t });
    const ids = Array.from({ length: 65_536 }, () => generator.generate()); // T0 used up
    t = T0 + 3; // paused
    for (let k = 0; k < 2 * 65_536 + 5; k++) ids.push(generator.generate());
    const counts = new Map<number, number>();
    for (const id of ids) {
      const { timestamp } = generator.parse(id);
      counts.set(timestamp, (counts.get(timestamp) ?? 0) + 1);
    }
    expect([...counts.entries()]).toEqual([
      [T0, 65_536],
      [T0 + 1, 65_536],
      [T0 + 2, 65_536],
      [T0 + 3, 5],
    ]);
    expect(violationsOf(generator, ids, 4, t)).toEqual([]);
  });

  it('throws ClockBackwardsError when the clock reads earlier than the last ID, and resumes in order once it is back', () => {
    const clock = new ScriptedClock([T0, T0, T0 - 5, T0 + 1]);
    const generator = new CosIdGenerator({ machineId: 1, clock: clock.now });
    const first = generator.generate();
    generator.generate();
    let error: unknown;
    try {
      generator.generate();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ClockBackwardsError);
    expect((error as ClockBackwardsError).backwardsMs).toBe(5);
    const next = generator.generate();
    expect(next > first).toBe(true);
    expect(generator.parse(next).timestamp).toBe(T0 + 1);
  });

  it("with reading reuse on (the default clock's setting), reads the clock afresh after the synchronous run ends, and at least every 8th ID within one", async () => {
    const clock = new ScriptedClock([T0]);
    const generator = new CosIdGenerator({ machineId: 1, clock: clock.now, clockReadingReuse: 7 });
    for (let i = 0; i < 80; i++) generator.generate();
    expect(clock.reads).toBe(10);
    await Promise.resolve();
    generator.generate();
    expect(clock.reads).toBe(11);
  });

  it('issues nothing at or before lastTimestamp (the floor a distributor hands out)', () => {
    const behind = new CosIdGenerator({ machineId: 1, lastTimestamp: T0, clock: () => T0 - 1 });
    expect(() => behind.generate()).toThrow(ClockBackwardsError);
    const frozenAtFloor = new CosIdGenerator({ machineId: 1, lastTimestamp: T0, clock: () => T0 });
    expect(() => frozenAtFloor.generate()).toThrow(ClockStalledError);
    const after = new CosIdGenerator({ machineId: 1, lastTimestamp: T0, clock: new SteppingClock(T0, 3).now });
    expect(after.parse(after.generate()).timestamp).toBe(T0 + 1);
  });

  it('stops at the next millisecond once its lease ended', () => {
    let t = T0;
    const lease = new MachineIdLease(9);
    const generator = new CosIdGenerator({ machineId: 9, clock: () => t, lease });
    generator.generate();
    lease.revoke(new Error('released'));
    expect(generator.generate()).toHaveLength(15); // the same millisecond: its IDs are not later than what was reported
    t++;
    expect(() => generator.generate()).toThrow('released');
    expect(() => generator.generate()).toThrow('released');
  });

  it('rejects timestamps the 44 bits cannot hold and invalid options', () => {
    expect(() => new CosIdGenerator({ machineId: 1, clock: () => 2 ** 44 }).generate()).toThrow(TimestampOverflowError);
    expect(() => new CosIdGenerator({ machineId: 2 ** 20 })).toThrow(IdGeneratorOptionsError);
    expect(() => new CosIdGenerator({ machineId: -1 })).toThrow(IdGeneratorOptionsError);
    expect(() => new CosIdGenerator({ machineId: 1.5 })).toThrow(IdGeneratorOptionsError);
    expect(() => new CosIdGenerator({ machineId: 1, lastTimestamp: -3 })).toThrow(IdGeneratorOptionsError);
    expect(() => new CosIdGenerator({ machineId: 1, clock: 42 as never })).toThrow(IdGeneratorOptionsError);
  });

  it('parse rejects what it cannot have produced', () => {
    const generator = new CosIdGenerator({ machineId: 1 });
    expect(() => generator.parse('short')).toThrow(InvalidIdError);
    expect(() => generator.parse('0VcRAUsk000500-')).toThrow(InvalidIdError);
    expect(() => generator.parse('0VcRAUskzzzz000')).toThrow(/machine ID exceeds/);
    expect(() => generator.parse('0VcRAUsk0005zzz')).toThrow(/sequence exceeds/);
    expect(() => generator.parse(42 as never)).toThrow(InvalidIdError);
  });

  it('accepts a clock object with now()', () => {
    const generator = new CosIdGenerator({ machineId: 2, clock: { now: () => T0 } });
    expect(generator.parse(generator.generate()).timestamp).toBe(T0);
  });
});
