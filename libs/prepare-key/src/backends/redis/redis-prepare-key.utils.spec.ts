import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decodeKeyPart, encodeKeyPart, escapeGlob, recordKeyHead } from './redis-prepare-key.utils.js';

const anyPart = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
const trickyPart = fc.string({
  unit: fc.constantFrom(
    '.',
    ':',
    '{',
    '}',
    '%',
    '*',
    '?',
    '[',
    ']',
    '\\',
    '|',
    ' ',
    'é',
    '键',
    '🔑',
    '2',
    '5',
    'a',
    'A',
  ),
  minLength: 1,
  maxLength: 8,
});
const part = fc.oneof(anyPart, trickyPart);

/** The Redis Cluster hash tag: the text between the first '{' and the first '}' after it. */
function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : undefined;
}

describe('Redis record key layout', () => {
  it('encodes a part to safe characters only, and decodes it back', () => {
    fc.assert(
      fc.property(part, (p) => {
        const encoded = encodeKeyPart(p);
        expect(encoded).toMatch(/^[A-Za-z0-9_.~%-]+$/);
        expect(decodeKeyPart(encoded)).toBe(p);
      }),
    );
  });

  it('never maps two (name, key) pairs to one record key', () => {
    fc.assert(
      fc.property(part, part, part, part, (n1, k1, n2, k2) => {
        fc.pre(n1 !== n2 || k1 !== k2);
        expect(`${recordKeyHead('p', n1)}${encodeKeyPart(k1)}}`).not.toBe(
          `${recordKeyHead('p', n2)}${encodeKeyPart(k2)}}`,
        );
      }),
    );
    // The pairs a naive "name:key" join would confuse.
    const joined = [
      ['a', 'b:c'],
      ['a:b', 'c'],
      ['a{', '}b'],
      ['a%3A', 'b'],
      ['a', '%3Ab'],
    ].map(([n, k]) => `${recordKeyHead('p', n)}${encodeKeyPart(k)}}`);
    expect(new Set(joined).size).toBe(joined.length);
  });

  it('hash-tags exactly the encoded (name, key) pair, whatever braces they hold', () => {
    fc.assert(
      fc.property(part, part, (name, key) => {
        const recordKey = `${recordKeyHead('ddd-kit:prepare', name)}${encodeKeyPart(key)}}`;
        expect(hashTag(recordKey)).toBe(`${encodeKeyPart(name)}:${encodeKeyPart(key)}`);
      }),
    );
  });

  it('escapes every SCAN glob character of a literal prefix', () => {
    expect(escapeGlob('a*b?c[d]e\\f')).toBe('a\\*b\\?c\\[d\\]e\\\\f');
    expect(escapeGlob('plain:prefix')).toBe('plain:prefix');
  });
});
