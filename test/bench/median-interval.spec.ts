import { describe, expect, it } from '@jest/globals';
// @ts-expect-error: the bench is plain JavaScript, without declarations
import { medianInterval } from '../../bench/util.js';

const interval = medianInterval as (values: number[]) => [number, number] | undefined;

describe('the bench: the 95% interval of a median ratio', () => {
  it('is the order statistics the binomial table gives, whatever the input order', () => {
    const ranks = (n: number) => interval(Array.from({ length: n }, (_, i) => n - i));
    expect(ranks(6)).toEqual([1, 6]);
    expect(ranks(10)).toEqual([2, 9]);
    expect(ranks(16)).toEqual([4, 13]);
    expect(ranks(24)).toEqual([7, 18]);
  });

  it('is undefined when too few pairs give 95% at all', () => {
    expect(interval([1, 2, 3, 4, 5])).toBeUndefined();
  });

  it('holds the true median at least 95% of the time', () => {
    // A seeded generator: the test means the same on every run.
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let covered = 0;
    const trials = 4000;
    for (let t = 0; t < trials; t++) {
      const draws = Array.from({ length: 10 }, () => random());
      const [lo, hi] = interval(draws)!;
      if (lo <= 0.5 && 0.5 <= hi) covered++;
    }
    // 97.9% with ten draws; below 95% the interval would claim more than it knows.
    expect(covered / trials).toBeGreaterThanOrEqual(0.95);
    expect(covered / trials).toBeLessThan(0.995);
  });
});
