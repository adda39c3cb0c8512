import { describe, expect, it } from '@jest/globals';
import { SeenValues } from './seen-values.js';

describe('SeenValues', () => {
  it('never calls a value seen before new, and rarely calls a new one seen', () => {
    const seen = new SeenValues();
    let wronglySeen = 0;
    for (let i = 0; i < 200_000; i++) if (!seen.add(`handle\0user-${i}`)) wronglySeen++;
    for (let i = 0; i < 200_000; i += 997) expect(seen.add(`handle\0user-${i}`)).toBe(false);
    expect(seen.add('email\0user-1')).toBe(true); // another key's value is another value
    expect(wronglySeen).toBeLessThan(5);
  });
});
