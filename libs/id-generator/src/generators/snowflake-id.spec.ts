import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ClockBackwardsError, IdGeneratorOptionsError, InvalidIdError, TimestampOverflowError } from '../errors.js';
import { Radix62 } from '../radix62/radix62.js';
import { SteppingClock } from '../__tests__/test-clocks.js';
import { SNOWFLAKE_DEFAULT_EPOCH } from './snowflake.options.js';
import { SnowflakeId } from './snowflake-id.js';

const T0 = 1_750_000_000_000;

const layouts = fc
  .record({
    timestampBits: fc.integer({ min: 28, max: 45 }),
    machineBits: fc.integer({ min: 1, max: 16 }),
    sequenceBits: fc.integer({ min: 1, max: 16 }),
  })
  .filter((l) => l.timestampBits + l.machineBits + l.sequenceBits <= 63);

/** The value an ID must encode, computed independently of the generator's fast path. */
function expectedValue(g: SnowflakeId, timestamp: number, machineId: number, sequence: number): bigint {
  return (
    (BigInt(timestamp - g.epoch) << BigInt(g.machineBits + g.sequenceBits)) |
    (BigInt(machineId) << BigInt(g.sequenceBits)) |
    BigInt(sequence)
  );
}

describe('SnowflakeId', () => {
  it('defaults to 41/10/12 bits from epoch 1577203200000 and 11 Radix62 characters', () => {
    const g = new SnowflakeId({ machineId: 1 });
    expect([g.timestampBits, g.machineBits, g.sequenceBits, g.epoch, g.width]).toEqual([41, 10, 12, 1577203200000, 11]);
    expect(SNOWFLAKE_DEFAULT_EPOCH).toBe(1577203200000);
    expect(g.generate()).toMatch(/^[0-9A-Za-z]{11}$/);
  });

  it('every layout: Radix62 IDs strictly increase as strings, bigints as numbers, and both parse back', () => {
    fc.assert(
      fc.property(
        layouts,
        fc.nat(),
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 300 }),
        (layout, seed, steps) => {
          const machineId = seed % 2 ** layout.machineBits;
          const epoch = T0 - 1_000_000 - (seed % 1_000_000);
          let t = epoch + (seed % (2 ** layout.timestampBits - 10_000));
          let i = 0;
          // Any pace, but never standing still for more than three readings.
          const g = new SnowflakeId({
            ...layout,
            machineId,
            epoch,
            clock: () => (t += i % 3 === 2 ? 1 + steps[i++ % steps.length] : steps[i++ % steps.length]),
          });
          let previous: { text: string; value: bigint } | undefined;
          const problems: string[] = [];
          for (let k = 0; k < steps.length; k++) {
            const text = k % 2 === 0 ? g.generate() : Radix62.encode(g.generateBigInt(), g.width);
            const state = g.parse(text);
            const value = expectedValue(g, state.timestamp, state.machineId, state.sequence);
            if (state.machineId !== machineId) problems.push(`machine ${state.machineId}`);
            if (state.timestamp > t) problems.push(`${text} is ahead of the clock`);
            if (text !== Radix62.encode(value, g.width)) problems.push(`${text} is not the Radix62 of ${value}`);
            if (g.parse(value).sequence !== state.sequence) problems.push('bigint parse differs');
            if (previous && !(text > previous.text && value > previous.value))
              problems.push(`${text} after ${previous.text}`);
            previous = { text, value };
          }
          expect(problems).toEqual([]);
        },
      ),
    );
  });

  it('the fast string path equals the exact encoding at any timestamp (carry across the split included)', () => {
    fc.assert(
      fc.property(
        layouts,
        fc.nat(),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom('radix62' as const, 'decimal' as const),
        (layout, seed, count, format) => {
          const machineId = seed % 2 ** layout.machineBits;
          const timestamp = SNOWFLAKE_DEFAULT_EPOCH + (seed % (2 ** layout.timestampBits - 1_000));
          const g = new SnowflakeId({ ...layout, machineId, format, clock: new SteppingClock(timestamp, 50).now });
          const problems: string[] = [];
          for (let k = 0; k < count; k++) {
            const text = g.generate();
            const state = g.parse(text);
            const value = expectedValue(g, state.timestamp, state.machineId, state.sequence);
            const exact = format === 'radix62' ? Radix62.encode(value, g.width) : value.toString();
            if (text !== exact) problems.push(`${text} ≠ ${exact}`);
          }
          expect(problems).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('decimal IDs are the decimal value and increase numerically', () => {
    const g = new SnowflakeId({ machineId: 1023, format: 'decimal', clock: new SteppingClock(T0, 3).now });
    const ids = Array.from({ length: 5_000 }, () => g.generate());
    const values = ids.map((id) => BigInt(id));
    expect(values.every((v, k) => k === 0 || v > values[k - 1])).toBe(true);
    expect(ids.every((id) => /^[1-9][0-9]*$/.test(id))).toBe(true);
    expect(g.parse(ids[0]).machineId).toBe(1023);
  });

  it('never wraps the 12-bit sequence: 10,000 IDs on a frozen-then-advancing clock are distinct, ordered, at most 4,096 per millisecond', () => {
    // 6,000 readings per millisecond: each millisecond is asked for more than 4,096 IDs, so the
    // generator must wait for the next one (a wrapping counter would reissue 0, 1, 2, …).
    const g = new SnowflakeId({ machineId: 5, clock: new SteppingClock(T0, 6_000).now });
    const ids = Array.from({ length: 10_000 }, () => g.generate());
    expect(new Set(ids).size).toBe(10_000);
    expect(ids.every((id, k) => k === 0 || id > ids[k - 1])).toBe(true);
    const perMs = new Map<number, number[]>();
    for (const id of ids) {
      const { timestamp, sequence } = g.parse(id);
      perMs.set(timestamp, [...(perMs.get(timestamp) ?? []), sequence]);
    }
    expect([...perMs.keys()]).toEqual([T0, T0 + 1, T0 + 2]);
    expect([...perMs.values()].map((s) => s.length)).toEqual([4096, 4096, 1808]);
    for (const sequences of perMs.values()) expect(sequences).toEqual(sequences.map((_, k) => k));
  });

  it('after a pause in a burst, uses the milliseconds the clock skipped — never ahead of the clock', () => {
    let t = T0;
    const g = new SnowflakeId({ machineId: 1, sequenceBits: 2, clock: () => t }); // 4 IDs per millisecond
    const ids = Array.from({ length: 4 }, () => g.generate()); // T0 used up
    t = T0 + 10; // the process was paused for 10 ms
    for (let k = 0; k < 40; k++) ids.push(g.generate());
    let times = ids.map((id) => g.parse(id).timestamp);
    expect(times).toEqual(Array.from({ length: 44 }, (_, k) => T0 + Math.floor(k / 4)));
    expect(() => g.generate()).toThrow(); // T0 + 10 is used up too and the clock stands still

    // A pause in the middle of a millisecond of a burst: the rest of that one is given up,
    // the skipped ones are used.
    t = T0 + 11;
    ids.push(g.generate()); // one ID into T0 + 11
    t = T0 + 20;
    for (let k = 0; k < 36; k++) ids.push(g.generate());
    times = ids.map((id) => g.parse(id).timestamp);
    expect(times.slice(44)).toEqual([T0 + 11, ...Array.from({ length: 36 }, (_, k) => T0 + 12 + Math.floor(k / 4))]);
    expect(times.every((time) => time <= t)).toBe(true);
    expect(ids.every((id, k) => k === 0 || id > ids[k - 1])).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('jumps to the clock after a pause longer than the catch-up limit, and when no burst was on', () => {
    let t = T0;
    const burst = new SnowflakeId({ machineId: 1, sequenceBits: 2, clock: () => t });
    for (let k = 0; k < 4; k++) burst.generate();
    t = T0 + 500;
    expect(burst.parse(burst.generate()).timestamp).toBe(T0 + 500);
    t = T0;
    const calm = new SnowflakeId({ machineId: 1, sequenceBits: 2, clock: () => t });
    calm.generate();
    t = T0 + 10;
    expect(calm.parse(calm.generate()).timestamp).toBe(T0 + 10);
  });

  it('throws ClockBackwardsError on a clock behind its last ID and issues nothing meanwhile', () => {
    let t = T0;
    const g = new SnowflakeId({ machineId: 1, clock: () => t });
    const first = g.generate();
    t -= 2;
    expect(() => g.generate()).toThrow(ClockBackwardsError);
    expect(() => g.generateBigInt()).toThrow(ClockBackwardsError);
    t += 2;
    const next = g.generate();
    expect(g.parse(next)).toEqual({ timestamp: T0, machineId: 1, sequence: 1 });
    expect(next > first).toBe(true);
  });

  it('rejects clocks outside its range and invalid layouts', () => {
    expect(() => new SnowflakeId({ machineId: 1, clock: () => SNOWFLAKE_DEFAULT_EPOCH - 1 }).generate()).toThrow(
      TimestampOverflowError,
    );
    expect(() =>
      new SnowflakeId({ machineId: 1, timestampBits: 30, clock: () => SNOWFLAKE_DEFAULT_EPOCH + 2 ** 30 }).generate(),
    ).toThrow(TimestampOverflowError);
    expect(() => new SnowflakeId({ machineId: 1024 })).toThrow(IdGeneratorOptionsError);
    expect(() => new SnowflakeId({ machineId: 1, timestampBits: 45, machineBits: 10, sequenceBits: 12 })).toThrow(
      /must not exceed 63/,
    );
    expect(() => new SnowflakeId({ machineId: 1, sequenceBits: 0 })).toThrow(IdGeneratorOptionsError);
    expect(() => new SnowflakeId({ machineId: 1, epoch: -5 })).toThrow(IdGeneratorOptionsError);
    expect(() => new SnowflakeId({ machineId: 1, format: 'hex' as never })).toThrow(IdGeneratorOptionsError);
  });

  it('parse rejects IDs of another layout or format', () => {
    const g = new SnowflakeId({ machineId: 1 });
    expect(() => g.parse('abc')).toThrow(InvalidIdError);
    expect(() => g.parse('zzzzzzzzzzz')).toThrow(/63-bit range/);
    expect(() => g.parse(-1n)).toThrow(InvalidIdError);
    const d = new SnowflakeId({ machineId: 1, format: 'decimal' });
    expect(() => d.parse('0012')).toThrow(InvalidIdError);
    expect(() => d.parse('12a')).toThrow(InvalidIdError);
  });
});
