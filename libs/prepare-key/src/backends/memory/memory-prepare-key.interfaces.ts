export interface MemoryPrepareKeyFactoryOptions {
  /**
   * How long an expired record stays readable by `getValue` (and listed by `records`) after
   * its ttlAt, in milliseconds, before it is dropped. Default 24 hours; `Infinity` keeps
   * expired records until they are prepared again or rolled back.
   */
  retentionMs?: number;
  /** The clock expiry is decided with (epoch milliseconds). Default `Date.now`; tests pass a fake one. */
  clock?: () => number;
}
