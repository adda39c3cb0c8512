/**
 * A deep copy that keeps prototypes (class instances stay instances of their class), for the
 * in-memory store: what it hands out must never share mutable state with what it holds, or a
 * caller could change stored data without a write. `structuredClone` would drop prototypes.
 * Handles plain and class objects (own enumerable string keys), arrays, Date, Map, Set,
 * typed arrays and cycles; functions are copied by reference. Objects whose state lives in
 * internal slots or `#private` fields cannot be copied this way: such aggregates map
 * themselves (override `toDocument` / `toAggregate`).
 */
export function deepClone<V>(value: V): V {
  return cloneValue(value, new Map()) as V;
}

function cloneValue(value: unknown, seen: Map<object, unknown>): unknown {
  if (value === null || typeof value !== 'object') return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (value instanceof Date) return new Date(value.getTime());
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return structuredClone(value);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(cloneValue(item, seen));
    return out;
  }
  if (value instanceof Map) {
    const out = new Map();
    seen.set(value, out);
    for (const [k, v] of value) out.set(cloneValue(k, seen), cloneValue(v, seen));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set();
    seen.set(value, out);
    for (const v of value) out.add(cloneValue(v, seen));
    return out;
  }
  const out = Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>;
  seen.set(value, out);
  for (const key of Object.keys(value)) out[key] = cloneValue((value as Record<string, unknown>)[key], seen);
  return out;
}
