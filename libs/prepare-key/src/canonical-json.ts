import { configure } from 'safe-stable-stringify';
import { PrepareKeyArgumentError } from './errors.js';

// The one definition of value equality: two values are equal when their canonical JSON
// (object keys sorted, recursively) is equal. `strict` refuses what JSON cannot represent
// (functions, symbols, NaN/Infinity) instead of silently turning it into null.
const stringify = configure({ strict: true, circularValue: Error, bigint: false, deterministic: true });

/** Canonical JSON of a value; throws PrepareKeyArgumentError when it cannot be encoded. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) throw new PrepareKeyArgumentError('value must not be undefined');
  // The common values (a string, a number, a flat record whose keys are already in order) have
  // the same canonical JSON as JSON.stringify gives, at a fraction of the cost: the prepare
  // hot path encodes one per call. Anything else takes the general path.
  const fast = plainJson(value);
  if (fast !== undefined) return fast;
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

/** JSON.stringify of a scalar, or of a plain object of scalars whose own keys are in ascending order; else undefined. */
function plainJson(value: unknown): string | undefined {
  if (isScalar(value)) return JSON.stringify(value);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype)
    return undefined;
  // Enumerable string keys in order; JSON.stringify reads the own ones of these, so with them
  // in order it gives the canonical JSON. A symbol-keyed or non-enumerable property is ignored
  // by both encoders alike; an inherited one (a polluted Object.prototype) only makes the
  // order check stricter.
  let previous: string | undefined;
  for (const key in value) {
    if (previous !== undefined && !(previous < key)) return undefined;
    if (!isScalar((value as Record<string, unknown>)[key])) return undefined;
    previous = key;
  }
  return JSON.stringify(value);
}

function isScalar(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}
