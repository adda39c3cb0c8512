import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { configure } from 'safe-stable-stringify';
import { canonicalJson } from './canonical-json.js';

// The general encoder, configured as canonical-json.ts configures it: the fast path for scalars
// and flat records in key order must give exactly its output, or values stored before and after
// would stop comparing equal.
const general = configure({ strict: true, circularValue: Error, bigint: false, deterministic: true });

const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('\ud800', 'a\udc00b', '"\\\n\u2028', ''),
);
const scalar = fc.oneof(
  text,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(-0),
);
const key = fc.oneof(text, fc.constantFrom('10', '9', '0', '__proto__', 'constructor', 'a', 'B'));

describe('canonicalJson', () => {
  it("gives the general encoder's output for scalars", () => {
    fc.assert(
      fc.property(scalar, (value) => canonicalJson(value) === general(value)),
      { numRuns: 2_000 },
    );
  });

  it("gives the general encoder's output for flat records, in key order or not", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(key, scalar), { maxLength: 8 }), fc.boolean(), (entries, sorted) => {
        const ordered = sorted ? [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : entries;
        const record: Record<string, unknown> = {};
        for (const [k, v] of ordered)
          Object.defineProperty(record, k, { value: v, enumerable: true, writable: true, configurable: true });
        return canonicalJson(record) === general(record);
      }),
      { numRuns: 2_000 },
    );
  });

  it('sorts keys whatever order they were written in, nested ones included', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
    expect(canonicalJson({ 9: 'x', 10: 'y', a: 1 })).toBe('{"10":"y","9":"x","a":1}');
  });

  it("gives the general encoder's output with a polluted Object.prototype (an inherited enumerable key)", () => {
    for (const inherited of ['a0', 'm', 'zz']) {
      (Object.prototype as Record<string, unknown>)[inherited] = 'polluted';
      try {
        for (const record of [{ a: 1, b: 2 }, { b: 1, a: 2 }, { m: 'own' }, {}])
          expect([inherited, canonicalJson(record)]).toEqual([inherited, general(record)]);
      } finally {
        delete (Object.prototype as Record<string, unknown>)[inherited];
      }
    }
  });
});
