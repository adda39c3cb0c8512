// Every time-based generator, bare and inside ClockSync, against arbitrary clock sequences:
// steps, stalls, jumps back and forward, and readings that are not integer epoch milliseconds
// (fractions, NaN, negative, unsafe). Each call either returns an ID or throws one of the
// errors a clock can cause; the IDs never repeat, strictly increase, never carry a time ahead
// of the clock, and parse back to exactly what they encode.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ClockSync } from '../clock/clock-sync.js';
import { ClockBackwardsError, ClockStalledError, InvalidClockReadingError, TimestampOverflowError } from '../errors.js';
import type { IdState, TimeBasedIdGenerator } from '../id-generator.interfaces.js';
import { Radix62 } from '../radix62/radix62.js';
import { CosIdGenerator } from './cosid-generator.js';
import { SafeJsSnowflakeId } from './safe-js-snowflake-id.js';
import { SnowflakeId } from './snowflake-id.js';

const START = Date.UTC(2026, 0, 1);
const MACHINE = 5;

type Step =
  | { kind: 'step'; ms: number }
  | { kind: 'stall' }
  | { kind: 'back'; ms: number }
  | { kind: 'jump'; ms: number }
  | { kind: 'fraction'; part: number }
  | { kind: 'nan' }
  | { kind: 'negative' }
  | { kind: 'unsafe' }
  | { kind: 'beyond-layout' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('step' as const), ms: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 6, arbitrary: fc.constant({ kind: 'stall' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('back' as const), ms: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('jump' as const), ms: fc.integer({ min: 60, max: 5_000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('fraction' as const),
      part: fc.double({ min: 0.001, max: 0.999, noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'nan' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'negative' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unsafe' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'beyond-layout' as const }) },
);

/** Plays the steps, one per reading; past the end it advances one millisecond per reading. */
class PlayedClock {
  private t = START;
  private next = 0;
  /** The latest valid reading handed out: no ID may carry a later time. */
  maxValid = -Infinity;
  constructor(private readonly steps: Step[]) {}
  readonly now = (): number => {
    const s = this.steps[this.next++];
    let reading: number;
    if (s === undefined) reading = ++this.t;
    else if (s.kind === 'step') reading = this.t += s.ms;
    else if (s.kind === 'stall') reading = this.t;
    else if (s.kind === 'back') reading = this.t -= s.ms;
    else if (s.kind === 'jump') reading = this.t += s.ms;
    else if (s.kind === 'fraction') reading = this.t + s.part;
    else if (s.kind === 'nan') reading = NaN;
    else if (s.kind === 'negative') reading = -this.t;
    else if (s.kind === 'unsafe') reading = 2 ** 60;
    else reading = 2 ** 50; // a safe integer past every layout used here (year 37648)
    if (Number.isSafeInteger(reading) && reading >= 0 && reading < 2 ** 50)
      this.maxValid = Math.max(this.maxValid, reading);
    return reading;
  };
}

interface Subject {
  name: string;
  make: (clock: () => number) => TimeBasedIdGenerator;
  /** The ID that `state` encodes, independently of the generator's own encoder. */
  encode: (state: IdState) => string;
  /** Strict order of two IDs as the generator promises it. */
  less: (a: string, b: string) => boolean;
}

const EPOCH = Date.UTC(2020, 0, 1);
const snowflakeValue = (s: IdState, machineBits: number, sequenceBits: number): bigint =>
  (BigInt(s.timestamp - EPOCH) << BigInt(machineBits + sequenceBits)) |
  (BigInt(s.machineId) << BigInt(sequenceBits)) |
  BigInt(s.sequence);

const bare: Subject[] = [
  {
    name: 'CosIdGenerator',
    make: (clock) => new CosIdGenerator({ machineId: MACHINE, clock }),
    encode: (s) => Radix62.encode(s.timestamp, 8) + Radix62.encode(s.machineId, 4) + Radix62.encode(s.sequence, 3),
    less: (a, b) => a < b,
  },
  {
    // Two sequence bits: four IDs a millisecond, so bursts wait for the clock.
    name: 'SnowflakeId (radix62)',
    make: (clock) => new SnowflakeId({ machineId: MACHINE, epoch: EPOCH, machineBits: 10, sequenceBits: 2, clock }),
    encode: (s) => Radix62.encode(snowflakeValue(s, 10, 2), 9),
    less: (a, b) => a < b,
  },
  {
    name: 'SnowflakeId (decimal)',
    make: (clock) =>
      new SnowflakeId({ machineId: MACHINE, epoch: EPOCH, machineBits: 10, sequenceBits: 2, format: 'decimal', clock }),
    encode: (s) => snowflakeValue(s, 10, 2).toString(),
    less: (a, b) => BigInt(a) < BigInt(b),
  },
  {
    name: 'SafeJsSnowflakeId (decimal)',
    make: (clock) =>
      new SafeJsSnowflakeId({ machineId: MACHINE, epoch: EPOCH, machineBits: 5, sequenceBits: 2, clock }),
    encode: (s) => snowflakeValue(s, 5, 2).toString(),
    less: (a, b) => Number(a) < Number(b),
  },
  {
    name: 'SafeJsSnowflakeId (radix62)',
    make: (clock) =>
      new SafeJsSnowflakeId({
        machineId: MACHINE,
        epoch: EPOCH,
        machineBits: 5,
        sequenceBits: 2,
        format: 'radix62',
        clock,
      }),
    encode: (s) => Radix62.encode(snowflakeValue(s, 5, 2), 9),
    less: (a, b) => a < b,
  },
];

const subjects: Subject[] = [
  ...bare,
  ...bare.map((s) => ({
    ...s,
    name: `ClockSync(${s.name})`,
    make: (clock: () => number) => new ClockSync(s.make(clock), { spinThresholdMs: 1, brokenThresholdMs: 30 }),
  })),
];

function check(condition: boolean, message: () => string): void {
  if (!condition) throw new Error(message());
}

const CLOCK_ERRORS = [ClockBackwardsError, InvalidClockReadingError, TimestampOverflowError, ClockStalledError];

describe.each(subjects)('$name under arbitrary clock readings', (subject) => {
  it('issues unique, increasing IDs that parse back to what they encode and never run ahead of the clock, or throws a clock error', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 200 }),
        (steps, calls) => {
          const clock = new PlayedClock(steps);
          const generator = subject.make(clock.now);
          const ids: string[] = [];
          for (let k = 0; k < calls; k++) {
            let id: string;
            try {
              id = generator.generate();
            } catch (error) {
              if (!CLOCK_ERRORS.some((type) => error instanceof type)) throw error;
              continue;
            }
            // Plain checks: expect() per ID would dominate the run time.
            const state = generator.parse(id);
            check(
              Number.isSafeInteger(state.timestamp) && state.machineId === MACHINE,
              () => `${id} parses to ${JSON.stringify(state)}`,
            );
            check(
              state.timestamp <= clock.maxValid,
              () => `${id} carries ${state.timestamp}, ahead of every reading (${clock.maxValid})`,
            );
            check(
              subject.encode(state) === id,
              () => `${id} parses to ${JSON.stringify(state)}, which encodes ${subject.encode(state)}`,
            );
            check(
              ids.length === 0 || subject.less(ids[ids.length - 1], id),
              () => `${id} does not follow ${ids[ids.length - 1]}`,
            );
            ids.push(id);
          }
          check(new Set(ids).size === ids.length, () => 'an ID repeats');
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('readings that are not integer epoch milliseconds', () => {
  const readings: Array<[string, number]> = [
    ['a fraction (performance.timeOrigin + performance.now())', START + 0.25],
    ['NaN', NaN],
    ['a negative number', -START],
    ['an unsafe integer', 2 ** 60],
    ['Infinity', Infinity],
  ];
  const makers = bare.map((s) => [s.name, s.make] as const);

  it.each(makers)(
    '%s refuses each with InvalidClockReadingError, first reading or later, and keeps working once the clock is sane',
    (_name, make) => {
      for (const [, bad] of readings) {
        const first = make(() => bad);
        expect(() => first.generate()).toThrow(InvalidClockReadingError);
        let reading = START;
        const later = make(() => reading);
        const before = later.generate();
        reading = bad;
        expect(() => later.generate()).toThrow(InvalidClockReadingError);
        reading = START + 1;
        const after = later.generate();
        expect(later.parse(after).timestamp).toBe(START + 1);
        expect(after).not.toBe(before);
      }
    },
  );

  it('the message says what a clock must return', () => {
    expect(() => new CosIdGenerator({ machineId: 1, clock: () => START + 0.5 }).generate()).toThrow(
      /integer epoch milliseconds/,
    );
  });
});
