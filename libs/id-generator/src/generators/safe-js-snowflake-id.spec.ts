import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { IdGeneratorOptionsError, InvalidIdError } from '../errors.js';
import { Radix62 } from '../radix62/radix62.js';
import { SteppingClock } from '../__tests__/test-clocks.js';
import { SafeJsSnowflakeId } from './safe-js-snowflake-id.js';

const T0 = 1_750_000_000_000;

describe('SafeJsSnowflakeId', () => {
  it('fits Number.MAX_SAFE_INTEGER for the whole timestamp range', () => {
    const epoch = 1577203200000;
    const g: SafeJsSnowflakeId = new SafeJsSnowflakeId({ machineId: 31, clock: () => epoch + 2 ** 41 - 1 });
    expect(g.epoch).toBe(epoch);
    for (let k = 0; k < 128; k++) {
      const n = g.generateNumber();
      expect(Number.isSafeInteger(n)).toBe(true);
    }
    expect(g.parse(Number.MAX_SAFE_INTEGER)).toEqual({
      timestamp: g.epoch + 2 ** 41 - 1,
      machineId: 31,
      sequence: 127,
    });
  });

  it('numbers strictly increase, decimal and Radix62 strings parse back, any layout', () => {
    fc.assert(
      fc.property(
        fc.record({
          timestampBits: fc.integer({ min: 30, max: 42 }),
          machineBits: fc.integer({ min: 0, max: 6 }),
          sequenceBits: fc.integer({ min: 1, max: 5 }),
        }),
        fc.nat(),
        fc.constantFrom('decimal' as const, 'radix62' as const),
        (layout, seed, format) => {
          const machineId = seed % 2 ** layout.machineBits;
          const g = new SafeJsSnowflakeId({
            ...layout,
            machineId,
            format,
            epoch: 1_700_000_000_000,
            clock: new SteppingClock(1_700_000_000_000 + (seed % (2 ** layout.timestampBits - 100_000)), 7).now,
          });
          const problems: string[] = [];
          const valueOf = (text: string): number => (format === 'decimal' ? Number(text) : Radix62.decodeNumber(text));
          let previous = -1;
          let previousText = '';
          for (let k = 0; k < 200; k++) {
            let value: number;
            if (k % 2 === 0) {
              const text = g.generate();
              value = valueOf(text);
              if (format === 'radix62' && !(text > previousText)) problems.push(`${text} after ${previousText}`);
              if (JSON.stringify(g.parse(text)) !== JSON.stringify(g.parse(value)))
                problems.push(`${text} parses unlike ${value}`);
              previousText = text;
            } else {
              value = g.generateNumber();
              previousText = format === 'radix62' ? Radix62.encode(value, g.width) : String(value);
            }
            const state = g.parse(value);
            if (state.machineId !== machineId) problems.push(`machine ${state.machineId}`);
            const rebuilt =
              (state.timestamp - g.epoch) * 2 ** (layout.machineBits + layout.sequenceBits) +
              state.machineId * 2 ** layout.sequenceBits +
              state.sequence;
            if (rebuilt !== value) problems.push(`${value} parses to ${JSON.stringify(state)}`);
            if (!(value > previous)) problems.push(`${value} after ${previous}`);
            previous = value;
          }
          expect(problems).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('waits for the next millisecond instead of wrapping its 7-bit sequence', () => {
    const g = new SafeJsSnowflakeId({ machineId: 2, clock: new SteppingClock(T0, 300).now });
    const ids = Array.from({ length: 1_000 }, () => g.generateNumber());
    expect(new Set(ids).size).toBe(1_000);
    expect(ids.every((n, k) => k === 0 || n > ids[k - 1])).toBe(true);
    const counts = new Map<number, number>();
    for (const n of ids) counts.set(g.parse(n).timestamp, (counts.get(g.parse(n).timestamp) ?? 0) + 1);
    expect(Math.max(...counts.values())).toBe(128);
  });

  it('rejects layouts past 53 bits and foreign IDs', () => {
    expect(() => new SafeJsSnowflakeId({ machineId: 1, timestampBits: 42, machineBits: 5, sequenceBits: 7 })).toThrow(
      IdGeneratorOptionsError,
    );
    expect(() => new SafeJsSnowflakeId({ machineId: 32 })).toThrow(IdGeneratorOptionsError);
    const g = new SafeJsSnowflakeId({ machineId: 1 });
    expect(() => g.parse('-1')).toThrow(InvalidIdError);
    expect(() => g.parse(2 ** 53)).toThrow(InvalidIdError);
    expect(() => g.parse('1.5')).toThrow(InvalidIdError);
  });
});
