import { configure } from 'safe-stable-stringify';
import { PrepareKeyArgumentError } from './errors/prepare-key-argument.error.js';

// The one definition of value equality: two values are equal when their canonical JSON
// (object keys sorted, recursively) is equal. `strict` refuses what JSON cannot represent
// (functions, symbols, NaN/Infinity) instead of silently turning it into null.
const stringify = configure({ strict: true, circularValue: Error, bigint: false, deterministic: true });

/** Canonical JSON of a value; throws PrepareKeyArgumentError when it cannot be encoded. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) throw new PrepareKeyArgumentError('value must not be undefined');
  let json: string | undefined;
  try {
    json = stringify(value);
  } catch (err) {
    throw new PrepareKeyArgumentError(`value cannot be encoded as canonical JSON: ${(err as Error).message}`);
  }
  if (json === undefined) throw new PrepareKeyArgumentError('value cannot be encoded as canonical JSON');
  return json;
}

/** Values come back from every backend as parsed copies of what was stored. */
export function parseCanonicalJson<V>(json: string): V {
  return JSON.parse(json) as V;
}
