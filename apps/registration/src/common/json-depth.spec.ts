import { describe, expect, it } from '@jest/globals';
import { jsonTextNestsDeeperThan, MAX_JSON_DEPTH, valueNestsDeeperThan } from './json-depth.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('jsonTextNestsDeeperThan', () => {
  it(`counts levels of arrays and objects: ${MAX_JSON_DEPTH} pass, ${MAX_JSON_DEPTH + 1} do not`, () => {
    expect(jsonTextNestsDeeperThan(bytes(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonTextNestsDeeperThan(bytes(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(jsonTextNestsDeeperThan(bytes(`${'{"a":'.repeat(33)}1${'}'.repeat(33)}`))).toBe(true);
    expect(jsonTextNestsDeeperThan(bytes(`[${nested(20)},${nested(20)},{"a":${nested(30)}}]`))).toBe(false);
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(jsonTextNestsDeeperThan(bytes(JSON.stringify({ username: '['.repeat(1000) })))).toBe(false);
    expect(jsonTextNestsDeeperThan(bytes(JSON.stringify({ a: `\\"${'{'.repeat(100)}` })))).toBe(false);
    expect(jsonTextNestsDeeperThan(bytes(`{"a":"\\\\",${'"b":['.repeat(40)}`))).toBe(true);
  });

  it('is not fooled by multi-byte characters', () => {
    expect(jsonTextNestsDeeperThan(bytes(JSON.stringify({ a: '字'.repeat(500), b: '😀['.repeat(50) })))).toBe(false);
  });

  it('answers a 10 KB body nested 5,000 deep in one pass', () => {
    expect(jsonTextNestsDeeperThan(bytes(`{"username":${nested(5_000)}}`))).toBe(true);
  });
});

describe('valueNestsDeeperThan', () => {
  it(`counts objects and arrays: ${MAX_JSON_DEPTH} pass, ${MAX_JSON_DEPTH + 1} do not, without recursing`, () => {
    expect(valueNestsDeeperThan(JSON.parse(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(valueNestsDeeperThan(JSON.parse(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(valueNestsDeeperThan(JSON.parse(nested(100_000)))).toBe(true);
    expect(valueNestsDeeperThan({ username: 'abc', list: [1, [2, [3]]] })).toBe(false);
    expect(valueNestsDeeperThan('text')).toBe(false);
    expect(valueNestsDeeperThan(null)).toBe(false);
  });
});
