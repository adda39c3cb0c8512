export interface PostgresIdempotencyStoreOptions {
  /** The schema of the table; default the connection's search path. */
  schema?: string;
  /** The table; default `'ddd_kit_idempotency'`. */
  table?: string;
  /** Create the table at start-up (`CREATE … IF NOT EXISTS`); default true. Off: only check it (see schemaStatements()). */
  createTables?: boolean;
  /** How long a result is replayed when a request says nothing; default 24 hours. */
  ttlMs?: number;
  /**
   * How long an in-progress row left committed (a run whose transaction committed after its
   * work failed to record) refuses repeats; default 60,000 ms.
   */
  leaseMs?: number;
  /** How often rows past their retention are deleted; default 60,000 ms; 0: never (call sweep()). */
  sweepIntervalMs?: number;
  /**
   * Inside a transaction started from another pool: `'refuse'` (default) throws naming both
   * pools; `'autocommit'` runs in a transaction of this store's own.
   */
  foreignTransaction?: 'refuse' | 'autocommit';
  /**
   * How the store opens a transaction when a run finds none on its pool: default one of its own
   * (BEGIN … COMMIT on a connection of the pool). Give your transaction host's, e.g.
   * `(fn) => txHost.withTransaction(fn)` with nestjs-cls, so that `@Transactional()` code inside
   * the work joins the same transaction.
   */
  transaction?: <R>(fn: () => Promise<R>) => Promise<R>;
}
