import type { StoredRecord } from '../../prepare-key.interfaces.js';

const PLAIN = /^[A-Za-z0-9_.~-]*$/;

/**
 * Percent-encodes a name or key for use inside a record key. What remains literal is
 * `[A-Za-z0-9_.~-]`, so the result never holds the layout's separators (`:`, `{`, `}`), a glob
 * character for SCAN MATCH (`*?[]\`) or a bare `%`: distinct inputs give distinct outputs.
 * encodeURIComponent leaves `!'()*` literal; only `*` matters here (a glob character).
 */
export function encodeKeyPart(part: string): string {
  return PLAIN.test(part) ? part : encodeURIComponent(part).replace(/[!'()*]/g, percentEncodeAscii);
}

export function decodeKeyPart(encoded: string): string {
  return decodeURIComponent(encoded);
}

function percentEncodeAscii(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase()}`;
}

/**
 * Everything before the encoded key in a record key: `<prefix>:{<name>:`. A record key is
 * `<prefix>:{<name>:<key>}`: the hash tag `{<name>:<key>}` holds neither `{` nor `}`, so each
 * record has one well-defined slot and the records of one name spread over the whole Cluster.
 */
export function recordKeyHead(prefix: string, name: string): string {
  return `${prefix}:{${encodeKeyPart(name)}:`;
}

/** Escapes SCAN MATCH glob characters so that `literal` matches only itself. */
export function escapeGlob(literal: string): string {
  return literal.replace(/[*?[\]\\]/g, '\\$&');
}

export function encodeRecord(value: string, ttlAt: number): string {
  return `${ttlAt}|${value}`;
}

export function decodeRecord(record: string): StoredRecord {
  const separator = record.indexOf('|');
  return { ttlAt: Number(record.slice(0, separator)), value: record.slice(separator + 1) };
}
