import { IdGeneratorOptionsError, InvalidIdError } from '../errors.js';
import { encodeRadix62Fixed, Radix62, radix62Width } from '../radix62/radix62.js';
import type { IdState } from '../id-generator.interfaces.js';
import { SNOWFLAKE_DEFAULT_EPOCH, type SnowflakeFormat, type SnowflakeIdOptions } from './snowflake.options.js';
import { assertBits, TimeBasedIdGeneratorBase } from './time-based-id-generator.js';

/** Machine and sequence bits together stay within exact Number arithmetic on the hot path. */
const MAX_LOW_BITS = 40;

function assertEpoch(epoch: unknown): number {
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 0) {
    throw new IdGeneratorOptionsError(
      `epoch must be a non-negative integer of epoch milliseconds, got ${String(epoch)}`,
    );
  }
  return epoch;
}

/**
 * Snowflake: (timestamp since `epoch`, machine ID, sequence) in at most 63 bits, so the value
 * fits a signed 64-bit column. `generate()` returns a fixed-width Radix62 string (11 characters
 * for 63 bits) whose byte order is numeric order, or the decimal number (`format: 'decimal'`);
 * `generateBigInt()` returns the value itself.
 *
 * The hot path avoids BigInt: once per millisecond the value `timestamp << (machine+sequence
 * bits)` is split into a high part (encoded once) and a low remainder, and each ID only adds
 * its machine/sequence bits to the remainder and encodes a few low characters.
 */
export class SnowflakeId extends TimeBasedIdGeneratorBase {
  readonly epoch: number;
  readonly timestampBits: number;
  readonly machineBits: number;
  readonly sequenceBits: number;
  readonly format: SnowflakeFormat;
  /** Characters of a Radix62 ID. */
  readonly width: number;

  private readonly lowBits: number;
  private readonly lowBitsBig: bigint;
  private readonly machinePart: number;
  /** The encoding splits values at `radix ** lowChars`, which exceeds every low part. */
  private readonly lowChars: number;
  private readonly split: number;
  private readonly splitBig: bigint;
  private tickBase = 0n;
  private tickHigh = 0n;
  private tickLow = 0;
  private highText = '';
  private carryText: string | undefined;

  constructor(options: SnowflakeIdOptions) {
    const epoch = assertEpoch(options?.epoch ?? SNOWFLAKE_DEFAULT_EPOCH);
    const timestampBits = assertBits('timestampBits', options?.timestampBits ?? 41, 1, 53);
    const machineBits = assertBits('machineBits', options?.machineBits ?? 10, 0, 31);
    const sequenceBits = assertBits('sequenceBits', options?.sequenceBits ?? 12, 1, 31);
    if (timestampBits + machineBits + sequenceBits > 63) {
      throw new IdGeneratorOptionsError(
        `timestampBits + machineBits + sequenceBits must not exceed 63 (a signed 64-bit value), got ${timestampBits + machineBits + sequenceBits}`,
      );
    }
    if (machineBits + sequenceBits > MAX_LOW_BITS) {
      throw new IdGeneratorOptionsError(`machineBits + sequenceBits must not exceed ${MAX_LOW_BITS}`);
    }
    super(options, {
      minTimestamp: epoch,
      maxTimestamp: Math.min(epoch + 2 ** timestampBits - 1, Number.MAX_SAFE_INTEGER),
      machineBits,
      sequenceBits,
    });
    const format = options.format ?? 'radix62';
    if (format !== 'radix62' && format !== 'decimal')
      throw new IdGeneratorOptionsError(`format must be 'radix62' or 'decimal', got ${String(format)}`);
    this.epoch = epoch;
    this.timestampBits = timestampBits;
    this.machineBits = machineBits;
    this.sequenceBits = sequenceBits;
    this.format = format;
    this.lowBits = machineBits + sequenceBits;
    this.lowBitsBig = BigInt(this.lowBits);
    this.machinePart = this.machineId * 2 ** sequenceBits;
    this.width = radix62Width(timestampBits + this.lowBits);
    if (format === 'radix62') {
      this.lowChars = radix62Width(this.lowBits);
      this.split = 62 ** this.lowChars;
    } else {
      this.lowChars = String(2 ** this.lowBits).length;
      this.split = 10 ** this.lowChars;
    }
    this.splitBig = BigInt(this.split);
  }

  generate(): string {
    this.advance();
    let low = this.tickLow + this.machinePart + this.seq;
    let high = this.highText;
    if (low >= this.split) {
      low -= this.split;
      high = this.carryText ??= this.encodeHigh(this.tickHigh + 1n);
    }
    if (this.format === 'radix62') return high + encodeRadix62Fixed(low, this.lowChars);
    return high === '' ? String(low) : high + String(low).padStart(this.lowChars, '0');
  }

  generateBigInt(): bigint {
    this.advance();
    return this.tickBase + BigInt(this.machinePart + this.seq);
  }

  /** Accepts the string form this generator produces (its `format`) or the bigint value. */
  parse(id: string | bigint): IdState {
    let value: bigint;
    if (typeof id === 'bigint') {
      value = id;
    } else if (typeof id !== 'string') {
      throw new InvalidIdError(id, 'expected a string or bigint');
    } else if (this.format === 'radix62') {
      if (id.length !== this.width)
        throw new InvalidIdError(id, `a Radix62 Snowflake of this layout has ${this.width} characters`);
      value = Radix62.decode(id);
    } else {
      if (!/^(0|[1-9][0-9]{0,18})$/.test(id)) throw new InvalidIdError(id, 'expected a decimal number');
      value = BigInt(id);
    }
    if (value < 0n || value >= 1n << BigInt(this.timestampBits + this.lowBits)) {
      throw new InvalidIdError(id, `outside the ${this.timestampBits + this.lowBits}-bit range`);
    }
    const sequence = Number(value & ((1n << BigInt(this.sequenceBits)) - 1n));
    const machineId = Number((value >> BigInt(this.sequenceBits)) & ((1n << BigInt(this.machineBits)) - 1n));
    const timestamp = Number(value >> this.lowBitsBig) + this.epoch;
    return this.stateOf(id, timestamp, machineId, sequence);
  }

  protected override onTick(timestamp: number): void {
    this.tickBase = BigInt(timestamp - this.epoch) << this.lowBitsBig;
    this.tickHigh = this.tickBase / this.splitBig;
    this.tickLow = Number(this.tickBase % this.splitBig);
    this.highText = this.encodeHigh(this.tickHigh);
    this.carryText = undefined;
  }

  private encodeHigh(high: bigint): string {
    if (this.format === 'radix62')
      return this.width > this.lowChars ? Radix62.encode(high, this.width - this.lowChars) : '';
    return high === 0n ? '' : high.toString();
  }
}
