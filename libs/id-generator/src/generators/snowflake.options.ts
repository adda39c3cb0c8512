import type { TimeBasedGeneratorOptions } from '../id-generator.interfaces.js';

/** CosId's epoch: 2019-12-25T00:00:00Z. */
export const SNOWFLAKE_DEFAULT_EPOCH = 1577203200000;

/** `radix62`: fixed-width, string order = numeric order. `decimal`: the number in base 10 (no padding). */
export type SnowflakeFormat = 'radix62' | 'decimal';

export interface SnowflakeIdOptions extends TimeBasedGeneratorOptions {
  /** Epoch milliseconds that timestamp 0 stands for; default 1577203200000 (2019-12-25). */
  epoch?: number;
  /** Default 41 (about 69 years of milliseconds). */
  timestampBits?: number;
  /** Default 10 (1,024 machines). */
  machineBits?: number;
  /** Default 12 (4,096 IDs per millisecond). */
  sequenceBits?: number;
  /** What `generate()` returns; default `radix62`. */
  format?: SnowflakeFormat;
}
