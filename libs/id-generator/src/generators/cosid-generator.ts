import { InvalidIdError } from '../errors.js';
import { encodeRadix62Fixed, Radix62, RADIX62_PAIRS } from '../radix62/radix62.js';
import type { IdState, TimeBasedGeneratorOptions } from '../id-generator.interfaces.js';
import { TimeBasedIdGeneratorBase } from './time-based-id-generator.js';

const TIMESTAMP_BITS = 44;
const MACHINE_BITS = 20;
const SEQUENCE_BITS = 16;
const TIMESTAMP_CHARS = 8; // 62^8 > 2^44
const MACHINE_CHARS = 4; // 62^4 > 2^20
const SEQUENCE_CHARS = 3; // 62^3 > 2^16
const MAX_SEQUENCE = 2 ** SEQUENCE_BITS - 1;

let sequenceTable: string[] | undefined;
function sequences(): string[] {
  if (!sequenceTable) {
    sequenceTable = new Array<string>(MAX_SEQUENCE + 1);
    for (let i = 0; i <= MAX_SEQUENCE; i++)
      sequenceTable[i] = Radix62.ALPHABET[Math.floor(i / 3844)] + RADIX62_PAIRS[i % 3844];
  }
  return sequenceTable;
}

/**
 * CosId's 80-bit layout: 44-bit Unix milliseconds, 20-bit machine ID, 16-bit sequence (65,536
 * IDs per millisecond per generator), as a 15-character Radix62 string: 8 characters of time,
 * 4 of machine, 3 of sequence, each zero-padded, so byte order is (time, machine, sequence)
 * order. Synchronous; no BigInt on the hot path: the 12-character prefix is built once per
 * millisecond and each ID appends a precomputed sequence suffix.
 */
export class CosIdGenerator extends TimeBasedIdGeneratorBase {
  static readonly TIMESTAMP_BITS = TIMESTAMP_BITS;
  static readonly MACHINE_BITS = MACHINE_BITS;
  static readonly SEQUENCE_BITS = SEQUENCE_BITS;
  static readonly ID_LENGTH = TIMESTAMP_CHARS + MACHINE_CHARS + SEQUENCE_CHARS;

  private readonly machineText: string;
  private readonly suffixes: string[];
  private prefix = '';

  constructor(options: TimeBasedGeneratorOptions) {
    super(options, {
      minTimestamp: 0,
      maxTimestamp: 2 ** TIMESTAMP_BITS - 1,
      machineBits: MACHINE_BITS,
      sequenceBits: SEQUENCE_BITS,
    });
    this.machineText = encodeRadix62Fixed(this.machineId, MACHINE_CHARS);
    this.suffixes = sequences();
  }

  generate(): string {
    if (this.cachedReadings !== 0) {
      this.cachedReadings--;
      if (this.seq !== MAX_SEQUENCE) return this.prefix + this.suffixes[++this.seq];
    }
    const now = this.clock();
    if (now !== this.lastTs && this.enterReading(now)) {
      this.keepReading();
      return this.prefix + this.suffixes[this.seq];
    }
    if (this.seq !== MAX_SEQUENCE) {
      this.keepReading();
      return this.prefix + this.suffixes[++this.seq];
    }
    this.startTick(this.afterExhaustion());
    this.keepReading();
    return this.prefix + this.suffixes[this.seq];
  }

  /** Parses any CosId (the layout is fixed, so no instance is needed). */
  static parse(id: string): IdState {
    return PARSER.parse(id);
  }

  parse(id: string): IdState {
    if (typeof id !== 'string' || id.length !== CosIdGenerator.ID_LENGTH) {
      throw new InvalidIdError(id, `a CosId is ${CosIdGenerator.ID_LENGTH} Radix62 characters`);
    }
    const timestamp = Radix62.decodeNumber(id.slice(0, TIMESTAMP_CHARS));
    const machineId = Radix62.decodeNumber(id.slice(TIMESTAMP_CHARS, TIMESTAMP_CHARS + MACHINE_CHARS));
    const sequence = Radix62.decodeNumber(id.slice(TIMESTAMP_CHARS + MACHINE_CHARS));
    if (machineId >= 2 ** MACHINE_BITS) throw new InvalidIdError(id, 'machine ID exceeds 20 bits');
    if (sequence > MAX_SEQUENCE) throw new InvalidIdError(id, 'sequence exceeds 16 bits');
    return this.stateOf(id, timestamp, machineId, sequence);
  }

  protected override onTick(timestamp: number): void {
    this.prefix = encodeRadix62Fixed(timestamp, TIMESTAMP_CHARS) + this.machineText;
  }
}

const PARSER = new CosIdGenerator({ machineId: 0 });
