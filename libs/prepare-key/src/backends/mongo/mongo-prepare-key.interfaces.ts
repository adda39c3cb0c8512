export interface MongoPrepareKeyFactoryOptions {
  /**
   * The collection of a name is `<collectionPrefix><name>` (the name percent-encoded where it
   * holds anything but letters, digits, `_`, `.`, `-`, `~`). Default `'prepare_'`.
   */
  collectionPrefix?: string;
  /**
   * How long an expired record stays readable by `getValue`: each record carries
   * `expireAt = ttlAt + retentionMs`, and a TTL index on it lets MongoDB drop the record
   * (its TTL monitor runs about once a minute). Milliseconds, or `Infinity` to keep expired
   * records until they are rolled back or re-prepared. Default 24 hours.
   */
  retentionMs?: number;
}

/**
 * A record as stored: the key is the `_id`, whose unique index makes `prepare` atomic. A
 * tombstone (what a rollback leaves for a while) has an `op` and an `expireAt` but no value.
 */
export interface MongoPrepareKeyDocument {
  _id: string;
  /** The value's canonical JSON, compared as a string (MongoDB compares embedded documents by key order). */
  value?: string;
  /** Epoch milliseconds. */
  ttlAt?: number;
  /** The operation that last wrote the record (or left the tombstone). */
  op?: string;
  /** When MongoDB's TTL monitor may drop the record; absent when it never should. */
  expireAt?: Date;
}
