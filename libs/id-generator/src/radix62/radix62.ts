import { InvalidIdError } from '../errors.js';

/**
 * Digits, then upper case, then lower case: the ASCII order of the characters is the order of
 * their values, so fixed-width (zero-padded) strings compare byte by byte like the numbers they
 * encode. A case-insensitive collation breaks that (and equality): store them binary / `C`.
 */
export const RADIX62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const DIGITS: readonly string[] = RADIX62_ALPHABET.split('');
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 62; i++) VALUES[RADIX62_ALPHABET.charCodeAt(i)] = i;

/** 62^2 two-character strings, '00' … 'zz': most of the work of a fixed-width encode. */
export const RADIX62_PAIRS: readonly string[] = Array.from(
  { length: 62 * 62 },
  (_, i) => DIGITS[Math.floor(i / 62)] + DIGITS[i % 62],
);

/** How many characters the largest value of `bits` bits needs. */
export function radix62Width(bits: number): number {
  let width = 1;
  let capacity = 62n;
  const limit = 1n << BigInt(bits);
  while (capacity < limit) {
    capacity *= 62n;
    width++;
  }
  return width;
}

/**
 * Fixed-width encoding of a safe integer in [0, 62^width), without BigInt. The hot paths of the
 * generators call this; the caller guarantees the range.
 */
export function encodeRadix62Fixed(value: number, width: number): string {
  let out = '';
  let rest = value;
  let left = width;
  while (left >= 2) {
    const pair = rest % 3844;
    out = RADIX62_PAIRS[pair] + out;
    rest = (rest - pair) / 3844;
    left -= 2;
  }
  if (left === 1) out = DIGITS[rest % 62] + out;
  return out;
}

function encode(value: number | bigint, width = 0): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`Radix62 encodes non-negative safe integers or bigints, got ${value}`);
  } else if (typeof value !== 'bigint' || value < 0n) {
    throw new RangeError(`Radix62 encodes non-negative safe integers or bigints, got ${String(value)}`);
  }
  if (!Number.isInteger(width) || width < 0)
    throw new RangeError(`Radix62 width must be a non-negative integer, got ${width}`);
  let out = '';
  if (typeof value === 'number') {
    let rest = value;
    do {
      out = DIGITS[rest % 62] + out;
      rest = Math.floor(rest / 62);
    } while (rest > 0);
  } else {
    let rest = value;
    do {
      out = DIGITS[Number(rest % 62n)] + out;
      rest /= 62n;
    } while (rest > 0n);
  }
  if (width > 0) {
    if (out.length > width)
      throw new RangeError(`${String(value)} needs ${out.length} Radix62 characters, more than the width ${width}`);
    out = out.padStart(width, '0');
  }
  return out;
}

function assertText(text: string): void {
  if (typeof text !== 'string' || text.length === 0)
    throw new InvalidIdError(text, 'expected a non-empty Radix62 string');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || VALUES[c] < 0)
      throw new InvalidIdError(text, `character ${JSON.stringify(text[i])} is not in the Radix62 alphabet`);
  }
}

function decode(text: string): bigint {
  assertText(text);
  let value = 0n;
  for (let i = 0; i < text.length; i++) value = value * 62n + BigInt(VALUES[text.charCodeAt(i)]);
  return value;
}

function decodeNumber(text: string): number {
  assertText(text);
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    value = value * 62 + VALUES[text.charCodeAt(i)];
    if (value > Number.MAX_SAFE_INTEGER)
      throw new InvalidIdError(text, 'the value exceeds Number.MAX_SAFE_INTEGER; use Radix62.decode for a bigint');
  }
  return value;
}

/**
 * Base-62 conversion. `encode(value, width)` pads with '0' to `width` characters, and padded
 * strings of one width sort (byte order) exactly like their values.
 */
export const Radix62 = Object.freeze({
  ALPHABET: RADIX62_ALPHABET,
  /** Non-negative safe integer or bigint → Radix62; `width` pads with '0' (and must suffice). */
  encode,
  /** Radix62 → bigint; rejects characters outside the alphabet with InvalidIdError. */
  decode,
  /** Radix62 → number; rejects values past Number.MAX_SAFE_INTEGER. */
  decodeNumber,
  /** The width that holds every value of `bits` bits. */
  widthForBits: radix62Width,
});
