import { describe, expect, it } from '@jest/globals';
import { IdGeneratorOptionsError } from '../errors.js';
import { NanoIdGenerator } from './nanoid-generator.js';

describe('NanoIdGenerator', () => {
  it('makes URL-safe IDs of the configured size, and distinct ones', () => {
    const generator = new NanoIdGenerator();
    const ids = Array.from({ length: 10_000 }, () => generator.generate());
    expect(ids.every((id) => /^[A-Za-z0-9_-]{21}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new NanoIdGenerator({ size: 10 }).generate()).toHaveLength(10);
  });

  it('draws from a custom alphabet', () => {
    const id = new NanoIdGenerator({ size: 30, alphabet: 'abc' }).generate();
    expect(id).toMatch(/^[abc]{30}$/);
  });

  it('rejects bad options', () => {
    expect(() => new NanoIdGenerator({ size: 0 })).toThrow(IdGeneratorOptionsError);
    expect(() => new NanoIdGenerator({ alphabet: 'aa' })).toThrow(IdGeneratorOptionsError);
  });
});
