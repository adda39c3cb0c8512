import { describe, expect, it } from '@jest/globals';
import { keyProblem, MAX_KEY_LENGTH } from './key-problem.js';

describe('keyProblem', () => {
  it('accepts any non-empty well-formed string up to the limit in characters', () => {
    for (const key of ['a', 'Ünïcødé', '👩‍💻', '{a}:b.c%', 'x'.repeat(MAX_KEY_LENGTH), '😀'.repeat(MAX_KEY_LENGTH)])
      expect(keyProblem(key)).toBeUndefined();
  });

  it.each([
    ['no string', { $ne: null }, /must be a string, got object/],
    ['null', null, /got null/],
    ['empty', '', /must not be empty/],
    ['too long', 'x'.repeat(MAX_KEY_LENGTH + 1), /at most 1024 characters/],
    ['a lone surrogate', 'a\uD800', /well-formed Unicode/],
    ['U+0000', 'A\u0000B', /U\+0000/],
  ])('refuses %s', (_what, key, reason) => {
    expect(keyProblem(key)).toMatch(reason);
  });
});
