/** 2^26 bits (8 MB): at a million values, a false "seen before" about once in ten million. */
const BITS_LOG2 = 26;
const MASK = (1 << BITS_LOG2) - 1;
const HASHES = 7;

/**
 * Values seen during one sweep, in fixed memory whatever their number (a Bloom filter): `add`
 * answers true when the value was certainly not seen before, false when it may have been. A
 * sweep takes the "may have been" values as candidates and checks them exactly afterwards.
 */
export class SeenValues {
  private readonly bits = new Uint8Array(1 << (BITS_LOG2 - 3));

  /** Adds `value`; true when it is certainly new. */
  add(value: string): boolean {
    // Two 32-bit FNV-1a hashes of different seeds, combined (Kirsch–Mitzenmacher).
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193 ^ value.length;
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    }
    h2 = (h2 ^ (h2 >>> 15)) | 1;
    let fresh = false;
    for (let k = 0; k < HASHES; k++) {
      const bit = (h1 + Math.imul(k, h2)) & MASK;
      const mask = 1 << (bit & 7);
      if ((this.bits[bit >>> 3] & mask) === 0) {
        fresh = true;
        this.bits[bit >>> 3] |= mask;
      }
    }
    return fresh;
  }
}
