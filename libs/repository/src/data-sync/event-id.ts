import { randomBytes } from 'node:crypto';

// Event ids are UUIDs of version 7 (RFC 9562): the Unix time in ms, 42 random bits drawn once
// per process, then a counter of this process. Unique per event (the counter within a process,
// the random bits between processes) and ordered by time within a process. No randomness is
// drawn per event: a random UUID was the largest single item of the library's own work on a
// write (randomUUID refills its buffer from the system's generator every 128 ids).
const tag = randomBytes(6).toString('hex'); // 48 random bits, of which 42 are used
/** `7` (the version) and 12 random bits; the variant (binary 10) and 14 random bits, as hex. */
const MIDDLE = `7${tag.slice(0, 3)}-${(8 | (parseInt(tag[3], 16) & 3)).toString(16)}${tag.slice(4, 7)}-${tag.slice(7, 11)}`;

/** Every byte as two hex digits: the counter is written from this table (a radix-16 toString and a pad per id cost more than the rest of the id). */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

let counter = 0;
let lastMs = -1;
let prefix = '';

/** A new event id: `tttttttt-tttt-7rrr-vrrr-rrrrcccccccc` (t time, r random per process, v variant, c counter). */
export function newEventId(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    const time = ms.toString(16).padStart(12, '0');
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-${MIDDLE}`;
  }
  const c = (counter = (counter + 1) >>> 0);
  return prefix + HEX[c >>> 24] + HEX[(c >>> 16) & 255] + HEX[(c >>> 8) & 255] + HEX[c & 255];
}
