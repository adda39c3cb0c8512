import type { Cluster, Redis } from 'ioredis';
import type { StoredRecord } from '../../prepare-key.interfaces.js';
import { TTL_FOREVER } from '../../prepared-value.js';

/**
 * Percent-encodes a name or key for use inside a record key. What remains literal is
 * `[A-Za-z0-9_.~-]`, so the result never holds the layout's separators (`:`, `{`, `}`), a glob
 * character for SCAN MATCH (`*?[]\`) or a bare `%`: distinct inputs give distinct outputs.
 * encodeURIComponent leaves `!'()*` literal; only `*` matters here (a glob character).
 */
export function encodeKeyPart(part: string): string {
  return isPlain(part) ? part : encodeURIComponent(part).replace(/[!'()*]/g, percentEncodeAscii);
}

/** True when every character of `part` is in `[A-Za-z0-9_.~-]` (a loop: this runs on every prepare). */
function isPlain(part: string): boolean {
  for (let i = 0; i < part.length; i++) {
    const c = part.charCodeAt(i);
    const plain =
      (c >= 97 && c <= 122) ||
      (c >= 65 && c <= 90) ||
      (c >= 48 && c <= 57) ||
      c === 95 ||
      c === 46 ||
      c === 126 ||
      c === 45;
    if (!plain) return false;
  }
  return true;
}

export function decodeKeyPart(encoded: string): string {
  return decodeURIComponent(encoded);
}

function percentEncodeAscii(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase()}`;
}

/**
 * Everything before the encoded key in a record key: `<keyPrefix>{<name>:`. A record key is
 * `<keyPrefix>{<name>:<key>}` (the default keyPrefix `ddd-kit:prepare:` ends with its separator): the hash tag `{<name>:<key>}` holds neither `{` nor `}`, so each
 * record has one well-defined slot and the records of one name spread over the whole Cluster.
 */
export function recordKeyHead(keyPrefix: string, name: string): string {
  return `${keyPrefix}{${encodeKeyPart(name)}:`;
}

/** Escapes SCAN MATCH glob characters so that `literal` matches only itself. */
export function escapeGlob(literal: string): string {
  return literal.replace(/[*?[\]\\]/g, '\\$&');
}

/** A record as stored: `<ttlAt>|<op>|<canonical JSON>` (ops never hold '|'). */
export function encodeRecord(value: string, ttlAt: number, op: string): string {
  return `${ttlAt}|${op}|${value}`;
}

/** The record, or undefined for a tombstone (`-|<op>|`, what a rollback leaves for a while). */
export function decodeRecord(record: string): StoredRecord | undefined {
  if (record.charCodeAt(0) === 45 /* - */) return undefined;
  const first = record.indexOf('|');
  const second = record.indexOf('|', first + 1);
  return { ttlAt: Number(record.slice(0, first)), value: record.slice(second + 1) };
}

/**
 * What the record that `SET <key> <written> NX GET` found in place settles without the PREPARE
 * script: true when it is `written` itself, the record this very call wrote (its op is unique to
 * the call), found by this call's command resent after a lost reply; false when a record held
 * forever is there, which no clock can call expired. Undefined when only the server's clock can
 * decide (a record with a ttlAt) or the key is free (a tombstone): the script decides those.
 */
export function settledByRecord(current: string, written: string): boolean | undefined {
  if (current === written) return true;
  // A tombstone's ttlAt reads as NaN ("-"): not held.
  return Number(current.slice(0, current.indexOf('|'))) >= TTL_FOREVER ? false : undefined;
}

/**
 * PING, answered by the server. On a Cluster every master that owns slots is asked (each holds
 * a share of the records), found from the slot map: ioredis drops a node it lost from `nodes()`,
 * so a master it cannot reach counts as down rather than missing. Before the Cluster has a slot
 * map, the Cluster itself is asked (it queues the command until it has one).
 */
export async function pingRedis(client: Redis | Cluster): Promise<void> {
  if ((client as Cluster).isCluster !== true) {
    await client.ping();
    return;
  }
  const cluster = client as Cluster;
  const owners = new Set<string>();
  for (const nodes of cluster.slots) if (nodes?.[0] !== undefined) owners.add(nodes[0]);
  if (owners.size === 0) {
    await cluster.ping();
    return;
  }
  const connected = new Map(cluster.nodes('all').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  await Promise.all(
    [...owners].map(async (owner) => {
      const node = connected.get(owner);
      if (node === undefined) {
        // ioredis reconnects to a lost master only when the slot map is refreshed (a command's
        // MOVED, or slotsRefreshInterval): ask for a refresh, so a later check can find it again.
        cluster.refreshSlotsCache();
        throw new Error(`the Cluster has no connection to master ${owner}`);
      }
      await node.ping();
    }),
  );
}
