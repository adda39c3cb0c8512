import { customAlphabet, nanoid } from 'nanoid';
import { IdGeneratorOptionsError } from '../errors.js';
import type { AsyncIdGenerator } from '../id-generator.interfaces.js';

export interface NanoIdGeneratorOptions {
  /** Characters per ID; default 21 (about 126 random bits with the default alphabet). */
  size?: number;
  /** Characters to draw from; default nanoid's URL-safe 64 characters. */
  alphabet?: string;
}

/**
 * Random IDs from the `nanoid` package (crypto-strength randomness). No machine ID and no
 * coordination; uniqueness is probabilistic and IDs carry no order.
 */
export class NanoIdGenerator implements AsyncIdGenerator {
  readonly size: number;
  private readonly next: () => string;

  constructor(options: NanoIdGeneratorOptions = {}) {
    const size = options.size ?? 21;
    if (!Number.isInteger(size) || size < 1 || size > 1024)
      throw new IdGeneratorOptionsError(`size must be an integer in [1, 1024], got ${String(size)}`);
    this.size = size;
    if (options.alphabet === undefined) {
      this.next = () => nanoid(size);
    } else {
      const { alphabet } = options;
      if (
        typeof alphabet !== 'string' ||
        alphabet.length < 2 ||
        alphabet.length > 256 ||
        new Set(alphabet).size !== alphabet.length
      ) {
        throw new IdGeneratorOptionsError('alphabet must be a string of 2 to 256 distinct characters');
      }
      this.next = customAlphabet(alphabet, size);
    }
  }

  generate(): string {
    return this.next();
  }

  generateAsync(): Promise<string> {
    return new Promise((resolve) => resolve(this.next()));
  }
}
