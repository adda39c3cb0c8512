import { MAX_HEADER_KEY_LENGTH } from './idempotency.constants.js';

// RFC 8941 §3.3.3 sf-string: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE, where
// unescaped is printable ASCII but DQUOTE and "\". Surrounding spaces are dropped (§4.2).
const SF_STRING = /^ *"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)" *$/;

/**
 * The key of an `Idempotency-Key` header, a Structured Field string (`"8e03978e-…"`), or why it
 * is refused. Only the quoted form is a key: a bare token, parameters, a list (two header
 * lines) or an empty string are refused.
 */
export function parseIdempotencyKey(value: string): { key: string } | { error: string } {
  const match = SF_STRING.exec(value);
  if (match === null)
    return { error: 'must be a Structured Field string: a key in double quotes, e.g. "8e03978e-40d5"' };
  const key = match[1].replace(/\\(["\\])/g, '$1');
  if (key.length === 0) return { error: 'must not be empty' };
  if (key.length > MAX_HEADER_KEY_LENGTH) return { error: `must be at most ${MAX_HEADER_KEY_LENGTH} characters` };
  return { key };
}
