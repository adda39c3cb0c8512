/**
 * SQLSTATEs that say the server could not serve the session, not that the statement was wrong:
 * class 08 (connection exception), 57P01 `admin_shutdown` (a fast or smart stop, a failover),
 * 57P02 `crash_shutdown` (an immediate stop, a crash of another backend), 57P03
 * `cannot_connect_now` (starting up, shutting down, in recovery).
 */
const UNREACHABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123])$/;

/** What Node says when a socket to the server fails. */
const UNREACHABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * What node-postgres says when its connection ended or could not be had: the connection ended
 * under a statement, a client used after its connection failed, a pool's `connectionTimeoutMillis`.
 */
const UNREACHABLE_MESSAGE =
  /^Connection terminated|^Client has encountered a connection error and is not queryable|^timeout exceeded when trying to connect/;

/**
 * True when `error` (or an error it was caused by) says PostgreSQL could not be reached or ended
 * the session: a restart, a failover, a network cut. The statement may or may not have run (a
 * COMMIT whose reply was lost); the store is the problem, not the request, so an HTTP service
 * answers 503 and the client retries (with an idempotency key when a write must not run twice).
 * Errors the server sent about the statement itself (a constraint, a syntax error) are not.
 */
export function isPostgresUnreachable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = error; typeof e === 'object' && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNREACHABLE_SQLSTATE.test(code) || UNREACHABLE_ERRNO.has(code))) return true;
    if (typeof message === 'string' && UNREACHABLE_MESSAGE.test(message)) return true;
    if (code === 'PG_CONNECTION') return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isPostgresUnreachable(inner))) return true;
  }
  return false;
}
