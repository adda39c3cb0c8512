import { describe, expect, it } from '@jest/globals';
// @ts-expect-error: the bench is plain JavaScript, without declarations
import { verdict as untyped } from '../../bench/util.js';

type Range = [number, number];
const verdict = untyped as (
  target: number | undefined,
  ratio: number | undefined,
  interval?: Range,
  control?: { interval?: Range },
) => string;

describe("the bench: a row's verdict on its target", () => {
  it('met at or above the target, whatever the interval', () => {
    expect(verdict(0.95, 0.95, [0.7, 1.2])).toBe('≥ 0.95× met');
    expect(verdict(0.95, 1.4)).toBe('≥ 0.95× met');
  });

  it('MISSED when the whole interval lies below the target, even with a wide A/A control', () => {
    expect(verdict(0.95, 0.9, [0.85, 0.94], { interval: [0.8, 1.2] })).toBe('≥ 0.95× MISSED');
  });

  it('not resolved when the target is inside the interval and no control, or a narrower one, says more', () => {
    expect(verdict(0.95, 0.93, [0.9, 0.97])).toBe('≥ 0.95× MISSED (inside the 95% interval: not resolved)');
    expect(verdict(0.95, 0.9, [0.85, 0.97], { interval: [0.98, 1.03] })).toBe(
      '≥ 0.95× MISSED (inside the 95% interval: not resolved)',
    );
  });

  it("below this machine's resolution when the gap is no larger than the control's reach from 1.00×", () => {
    expect(verdict(0.95, 0.94, [0.9, 0.99], { interval: [0.99, 1.07] })).toBe(
      "≥ 0.95× MISSED by 0.01×: below this machine's resolution (A/A control 0.99–1.07×, ±0.07×)",
    );
    expect(verdict(0.95, 0.91, [0.86, 0.96], { interval: [0.97, 1.03] })).toBe(
      '≥ 0.95× MISSED (inside the 95% interval: not resolved)',
    );
  });

  it('a bound on a measured value: met or MISSED, with what was measured', () => {
    expect(verdict({ max: 5, value: 4.2, unit: 'ms' } as never, undefined)).toBe('≤ 5.00 ms met (4.20 ms)');
    expect(verdict({ max: 5, value: 6, unit: 'ms' } as never, undefined)).toBe('≤ 5.00 ms MISSED (6.00 ms)');
  });
});
