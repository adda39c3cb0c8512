export interface RedisPrepareKeyFactoryOptions {
  /**
   * Prepended to every record key as given, so include the separator: `<keyPrefix>{<name>:<key>}`
   * (name and key percent-encoded). The same convention as ioredis's own `keyPrefix` option and
   * `RedisMachineIdDistributor`'s `keyPrefix`. Must not contain `{` or `}`, which would change
   * the hash tag. Default `'ddd-kit:prepare:'`.
   */
  keyPrefix?: string;
  /**
   * How long an expired record stays readable by `getValue` before Redis drops it: each
   * record is written with `PXAT ttlAt + retentionMs`. Forever records never expire.
   * Milliseconds, or `Infinity` to keep expired records until they are rolled back or
   * re-prepared. Default 24 hours.
   */
  retentionMs?: number;
  /**
   * Whether every operation checks the seal that recognises a store that lost its data (Redis
   * without persistence, a flush, a failover to an empty node or shard): default true, and then
   * `prepare` always runs its Lua script. `false` only for a Redis whose persistence you trust
   * (AOF with `appendfsync always`): `prepare` then sends the cheaper native `SET … NX GET`
   * first, and a wiped store answers from what it holds. See docs/backends.md.
   */
  seal?: boolean;
  /**
   * How long one operation waits for Redis (a `prepare`, `get`, `rollback`, `reprepare`, a page of
   * `records`) before it rejects with OperationTimeoutError (code `OPERATION_TIMEOUT`): a Redis
   * that accepts connections but does not answer costs a caller this long, not the whole stall.
   * The outcome is then unknown, as after a lost reply: a `prepare` releases what it may have
   * written (once Redis answers again), nothing else is released on a guess. Milliseconds, or
   * `Infinity` for no deadline. Default 2,000.
   */
  operationTimeoutMs?: number;
}
