/**
 * How deep a request's JSON may nest (the body itself is level 1). The API's bodies are one level
 * deep; the bound leaves room and stops what a deep value costs further on: class-validator and
 * class-transformer recurse once per level and overflow the stack a few thousand levels down,
 * well within a 16 KB body.
 */
export const MAX_JSON_DEPTH = 32;

export const TOO_DEEP = `the request's JSON is nested deeper than ${MAX_JSON_DEPTH} levels`;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text (UTF-8 bytes) nests deeper than `max`: one pass, brackets inside strings
 * skipped. Malformed text is left to the parser; this only counts. (In UTF-8 every byte of a
 * multi-byte character is ≥ 0x80, so no such byte is taken for a bracket or a quote.)
 */
export function jsonTextNestsDeeperThan(bytes: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
  }
  return false;
}

/**
 * Whether a parsed value nests deeper than `max` (an object or an array is a level): walked
 * without recursion, and given up on as soon as the bound is passed. For values that did not go
 * through `jsonTextNestsDeeperThan` (an application whose body parser is not configureApp's).
 */
export function valueNestsDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next;
    if (current === null || typeof current !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}
