import { IdGeneratorOptionsError, InvalidIdError } from '../errors.js';
import { encodeRadix62Fixed, Radix62, radix62Width } from '../radix62/radix62.js';
import type { IdState } from '../id-generator.interfaces.js';
import { SNOWFLAKE_DEFAULT_EPOCH, type SnowflakeFormat, type SnowflakeIdOptions } from './snowflake.options.js';
import { assertBits, TimeBasedIdGeneratorBase } from './time-based-id-generator.js';

const SAFE_BITS = 53;

/**
 * A Snowflake that fits `Number.MAX_SAFE_INTEGER` (53 bits), for clients that parse IDs as
 * JavaScript numbers. Defaults: 41 timestamp bits (about 69 years from the epoch), 5 machine
 * bits (32 machines), 7 sequence bits (128 IDs per millisecond per machine). `generate()`
 * returns the decimal number by default (`format: 'radix62'` gives 9 fixed-width characters).
 */
export class SafeJsSnowflakeId extends TimeBasedIdGeneratorBase {
  readonly epoch: number;
  readonly timestampBits: number;
  readonly machineBits: number;
  readonly sequenceBits: number;
  readonly format: SnowflakeFormat;
  readonly width: number;
  private readonly lowSpan: number;
  private readonly machinePart: number;
  private tickBase = 0;

  constructor(options: SnowflakeIdOptions) {
    const epoch = options?.epoch ?? SNOWFLAKE_DEFAULT_EPOCH;
    if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 0) {
      throw new IdGeneratorOptionsError(
        `epoch must be a non-negative integer of epoch milliseconds, got ${String(epoch)}`,
      );
    }
    const timestampBits = assertBits('timestampBits', options?.timestampBits ?? 41, 1, 52);
    const machineBits = assertBits('machineBits', options?.machineBits ?? 5, 0, 30);
    const sequenceBits = assertBits('sequenceBits', options?.sequenceBits ?? 7, 1, 30);
    if (timestampBits + machineBits + sequenceBits > SAFE_BITS) {
      throw new IdGeneratorOptionsError(
        `timestampBits + machineBits + sequenceBits must not exceed ${SAFE_BITS} (Number.MAX_SAFE_INTEGER), got ${timestampBits + machineBits + sequenceBits}`,
      );
    }
    super(options, {
      minTimestamp: epoch,
      maxTimestamp: Math.min(epoch + 2 ** timestampBits - 1, Number.MAX_SAFE_INTEGER),
      machineBits,
      sequenceBits,
    });
    const format = options.format ?? 'decimal';
    if (format !== 'radix62' && format !== 'decimal')
      throw new IdGeneratorOptionsError(`format must be 'radix62' or 'decimal', got ${String(format)}`);
    this.epoch = epoch;
    this.timestampBits = timestampBits;
    this.machineBits = machineBits;
    this.sequenceBits = sequenceBits;
    this.format = format;
    this.lowSpan = 2 ** (machineBits + sequenceBits);
    this.machinePart = this.machineId * 2 ** sequenceBits;
    this.width = radix62Width(timestampBits + machineBits + sequenceBits);
  }

  generateNumber(): number {
    this.advance();
    return this.tickBase + this.machinePart + this.seq;
  }

  generate(): string {
    const value = this.generateNumber();
    return this.format === 'decimal' ? String(value) : encodeRadix62Fixed(value, this.width);
  }

  parse(id: string | number): IdState {
    let value: number;
    if (typeof id === 'number') {
      value = id;
    } else if (typeof id !== 'string') {
      throw new InvalidIdError(id, 'expected a string or number');
    } else if (this.format === 'radix62') {
      if (id.length !== this.width)
        throw new InvalidIdError(id, `a Radix62 SafeJsSnowflakeId of this layout has ${this.width} characters`);
      value = Radix62.decodeNumber(id);
    } else {
      if (!/^(0|[1-9][0-9]{0,15})$/.test(id)) throw new InvalidIdError(id, 'expected a decimal number');
      value = Number(id);
    }
    if (
      !Number.isSafeInteger(value) ||
      value < 0 ||
      value >= 2 ** (this.timestampBits + this.machineBits + this.sequenceBits)
    ) {
      throw new InvalidIdError(id, 'outside the range of this layout');
    }
    const low = value % this.lowSpan;
    const sequence = low % 2 ** this.sequenceBits;
    const machineId = (low - sequence) / 2 ** this.sequenceBits;
    const timestamp = (value - low) / this.lowSpan + this.epoch;
    return this.stateOf(id, timestamp, machineId, sequence);
  }

  protected override onTick(timestamp: number): void {
    this.tickBase = (timestamp - this.epoch) * this.lowSpan;
  }
}
