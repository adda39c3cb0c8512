import { describe, expect, it } from '@jest/globals';
import { IdGeneratorOptionsError } from '../errors.js';
import { SteppingClock } from '../__tests__/test-clocks.js';
import { CosIdGenerator } from './cosid-generator.js';
import { SafeJsSnowflakeId } from './safe-js-snowflake-id.js';
import { SnowflakeId } from './snowflake-id.js';

const T0 = 1_750_000_000_000;

/** How many of `values` fall on each residue of `n`. */
function residues(values: bigint[], n: number): number[] {
  const counts = new Array<number>(n).fill(0);
  for (const value of values) counts[Number(value % BigInt(n))]++;
  return counts;
}

// Low traffic: one ID per millisecond (one per event-loop turn, as a quiet service issues them).
describe('IDs at low traffic spread over id % N shards', () => {
  it('SnowflakeId: 400 IDs, one a millisecond, land on each of 4 shards 100 times', () => {
    const g = new SnowflakeId({ machineId: 3, clock: new SteppingClock(T0, 1).now });
    const ids = Array.from({ length: 400 }, () => g.generateBigInt());
    expect(residues(ids, 4)).toEqual([100, 100, 100, 100]);
    expect(new Set(ids).size).toBe(400);
  });

  it('SafeJsSnowflakeId and the CosId sequence part spread the same way', () => {
    const safe = new SafeJsSnowflakeId({ machineId: 1, clock: new SteppingClock(T0, 1).now });
    expect(
      residues(
        Array.from({ length: 400 }, () => BigInt(safe.generateNumber())),
        4,
      ),
    ).toEqual([100, 100, 100, 100]);
    const cosid = new CosIdGenerator({ machineId: 1, clock: new SteppingClock(T0, 1).now });
    const sequences = Array.from({ length: 400 }, () => BigInt(cosid.parse(cosid.generate()).sequence));
    expect(residues(sequences, 4)).toEqual([100, 100, 100, 100]);
  });

  it('past the reset threshold a new millisecond starts at 0; sequenceResetThreshold 0 starts every one at 0', () => {
    // 4 sequence bits: threshold 7 by default.
    const g = new SnowflakeId({ machineId: 0, sequenceBits: 4, clock: new SteppingClock(T0, 1).now });
    const sequences = Array.from({ length: 20 }, () => g.parse(g.generate()).sequence);
    expect(sequences).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]);
    const always = new SnowflakeId({
      machineId: 0,
      sequenceBits: 4,
      sequenceResetThreshold: 0,
      clock: new SteppingClock(T0, 1).now,
    });
    expect(Array.from({ length: 5 }, () => always.parse(always.generate()).sequence)).toEqual([0, 0, 0, 0, 0]);
  });

  it('a burst that used up a millisecond starts the next one at 0, and no ID repeats', () => {
    // 3 readings a millisecond, 2 sequence bits: sequences carry below the threshold (1).
    const g = new SnowflakeId({ machineId: 0, sequenceBits: 2, clock: new SteppingClock(T0, 6).now });
    const states = Array.from({ length: 24 }, () => g.parse(g.generate()));
    const keys = states.map((s) => `${s.timestamp}:${s.sequence}`);
    expect(new Set(keys).size).toBe(24);
    for (let i = 1; i < states.length; i++) {
      const [before, after] = [states[i - 1], states[i]];
      expect(after.timestamp * 4 + after.sequence).toBeGreaterThan(before.timestamp * 4 + before.sequence);
      if (after.timestamp !== before.timestamp && before.sequence === 3) expect(after.sequence).toBe(0);
    }
  });

  it('refuses a threshold outside the sequence range', () => {
    expect(() => new SnowflakeId({ machineId: 0, sequenceBits: 4, sequenceResetThreshold: 16 })).toThrow(
      IdGeneratorOptionsError,
    );
    expect(() => new SnowflakeId({ machineId: 0, sequenceResetThreshold: -1 })).toThrow(/sequenceResetThreshold/);
  });
});
