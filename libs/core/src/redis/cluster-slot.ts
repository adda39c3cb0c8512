/** How many hash slots a Redis Cluster has. */
export const CLUSTER_SLOTS = 16384;

/**
 * The hash slot of a key, as Redis Cluster computes it: CRC16 (XMODEM) of the key's hash tag
 * (the text between its first `{` and the next `}`, when not empty), else of the whole key,
 * modulo 16384. Computed over the key's UTF-8 bytes.
 */
export function clusterSlot(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(key, 'utf8')) % CLUSTER_SLOTS;
}

let tags: string[] | undefined;

/**
 * A short hash tag for each slot: `{<slotTag(slot)>}` puts a key in `slot`. Lets a script reach a
 * key of its own beside any other key (a marker co-slotted with a record). Built once a process
 * (about 100k CRC16s), from the shortest strings of `[0-9a-z]`.
 */
export function slotTag(slot: number): string {
  if (tags === undefined) tags = buildSlotTags();
  return tags[slot];
}

function buildSlotTags(): string[] {
  const found: string[] = new Array<string>(CLUSTER_SLOTS);
  let missing = CLUSTER_SLOTS;
  for (let n = 0; missing > 0; n++) {
    const tag = n.toString(36);
    const slot = crc16(Buffer.from(tag, 'latin1')) % CLUSTER_SLOTS;
    if (found[slot] === undefined) {
      found[slot] = tag;
      missing--;
    }
  }
  return found;
}

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc;
}
