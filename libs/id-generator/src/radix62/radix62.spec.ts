import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { InvalidIdError } from '../errors.js';
import { encodeRadix62Fixed, Radix62, RADIX62_ALPHABET, radix62Width } from './radix62.js';

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const numericOrder = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

describe('Radix62', () => {
  it('orders its alphabet by character code, so padded strings sort byte-wise like their values', () => {
    const codes = [...RADIX62_ALPHABET].map((c) => c.charCodeAt(0));
    expect(codes).toEqual([...codes].sort((a, b) => a - b));
    expect(new Set(codes).size).toBe(62);
  });

  it('padded order equals numeric order (64-bit values)', () => {
    const width = radix62Width(64);
    expect(width).toBe(11);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (a, b) => {
        const ea = Radix62.encode(a, width);
        const eb = Radix62.encode(b, width);
        expect(ea).toHaveLength(width);
        expect(byteOrder(ea, eb)).toBe(numericOrder(a, b));
      }),
      { numRuns: 2_000 },
    );
  });

  it('padded order equals numeric order for neighbours across digit boundaries', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -3, max: 3 }), (power, delta) => {
        const value = 62n ** BigInt(power) + BigInt(delta);
        expect(byteOrder(Radix62.encode(value - 1n, 11), Radix62.encode(value, 11))).toBe(-1);
      }),
    );
  });

  it('round-trips bigints and safe integers', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 128n }), (value) => {
        expect(Radix62.decode(Radix62.encode(value))).toBe(value);
      }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 9, max: 12 }),
        (value, width) => {
          const text = Radix62.encode(value, width);
          expect(Radix62.decodeNumber(text)).toBe(value);
          expect(encodeRadix62Fixed(value, width)).toBe(text);
        },
      ),
    );
  });

  it('widthForBits is the least width holding every value of that many bits', () => {
    for (let bits = 1; bits <= 128; bits++) {
      const width = Radix62.widthForBits(bits);
      expect(62n ** BigInt(width)).toBeGreaterThanOrEqual(2n ** BigInt(bits));
      if (width > 1) expect(62n ** BigInt(width - 1)).toBeLessThan(2n ** BigInt(bits));
    }
  });

  it('rejects bad input with clear errors', () => {
    expect(() => Radix62.encode(-1)).toThrow(RangeError);
    expect(() => Radix62.encode(1.5)).toThrow(RangeError);
    expect(() => Radix62.encode(2 ** 53)).toThrow(RangeError);
    expect(() => Radix62.encode(62n ** 3n, 3)).toThrow(/more than the width 3/);
    expect(() => Radix62.decode('ab-c')).toThrow(InvalidIdError);
    expect(() => Radix62.decode('')).toThrow(InvalidIdError);
    expect(() => Radix62.decode('é')).toThrow(InvalidIdError);
    expect(() => Radix62.decodeNumber('zzzzzzzzzz')).toThrow(/MAX_SAFE_INTEGER/);
  });
});
