export interface PostgresPrepareKeyFactoryOptions {
  /** The schema of the table; default: the connection's search path (an unqualified name). */
  schema?: string;
  /** The one table every name's records live in; default `'ddd_kit_prepare_keys'`. */
  table?: string;
  /**
   * Create the table and its index on first use (`CREATE … IF NOT EXISTS`); default true. Turn
   * it off when migrations own the schema: the DDL is in the README.
   */
  createTables?: boolean;
  /**
   * How long an expired record stays readable by `getValue` before the sweep deletes it:
   * milliseconds, or `Infinity` to keep expired records until rolled back or re-prepared.
   * Default 24 hours.
   */
  retentionMs?: number;
  /**
   * How often the factory deletes records past their retention (and rollbacks' tombstones);
   * default 60,000 ms; `0`: never — call `sweep()` yourself (a cron job, say).
   */
  sweepIntervalMs?: number;
}
