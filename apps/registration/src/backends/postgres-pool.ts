import type { Pool, PoolClient, PoolConfig } from 'pg';

/** The pool's connections when POSTGRES_POOL_MAX is not set (pg's own default). */
export const DEFAULT_POOL_MAX = 10;

/**
 * How long a request waits for a free connection when POSTGRES_CONNECTION_WAIT_MS is not set.
 * With a store silent, a request may wait this long for a connection and then the 2 s deadline
 * of a store operation: 5 s, well inside the 8 s within which every request is answered.
 */
export const DEFAULT_CONNECTION_WAIT_MS = 3_000;

/**
 * Every connection of the pool stayed busy for as long as a request may wait for one: nothing
 * was sent to PostgreSQL, the request can be retried. Answered as a 503 with this message.
 */
export class ConnectionWaitTimeoutError extends Error {
  override readonly name = 'ConnectionWaitTimeoutError';

  constructor(waitMs: number, size: number, options?: ErrorOptions) {
    super(`no database connection became free within ${waitMs} ms (all ${size} in use); retry later`, options);
  }
}

type ConnectCallback = (
  error: Error | undefined,
  client: PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * A pg.Pool whose wait for a connection is bounded (`connectionTimeoutMillis`, which pg also
 * applies to opening one): a wait that ran out while every connection was busy fails with
 * ConnectionWaitTimeoutError instead of pg's bare "timeout exceeded", for `connect()` and
 * `query()` alike (pg's `query()` goes through `connect`). The parts that copy the pool's
 * settings (a lease's companion pool) get the same class and bound.
 */
export function boundedWaitPool(
  PgPool: typeof Pool,
  options: PoolConfig & { max: number; connectionTimeoutMillis: number },
): Pool {
  class BoundedWaitPool extends PgPool {
    override connect(): Promise<PoolClient>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<PoolClient> | void {
      // Queued behind busy connections, as opposed to opening one (a server that does not answer).
      const queued = this.totalCount >= (this.options.max ?? DEFAULT_POOL_MAX) && this.idleCount === 0;
      const wait = this.options.connectionTimeoutMillis ?? 0;
      const mapped = (error: Error): Error =>
        queued && /timeout/i.test(error.message)
          ? new ConnectionWaitTimeoutError(wait, this.options.max ?? DEFAULT_POOL_MAX, { cause: error })
          : error;
      if (callback === undefined) return super.connect().catch((error: Error) => Promise.reject(mapped(error)));
      super.connect((error, client, done) => callback(error ? mapped(error) : undefined, client, done));
    }
  }
  return new BoundedWaitPool(options);
}
