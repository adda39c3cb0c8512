/** The statements of one PostgresIdempotencyStore, on its (quoted, checked) table. */
export interface IdempotencyStatements {
  lock: string;
  take: string;
  read: string;
  complete: string;
  release: string;
  sweep: string;
}

export const COLUMNS = ['key', 'fingerprint', 'token', 'state', 'result', 'expires_at'];

/** Idempotent DDL: the table (one row a key, by the key's digest) and the index the sweep reads. */
export function ddl(table: string, index: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  token text NOT NULL,
  state text NOT NULL,
  result text,
  expires_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at)`,
  ];
}

// Time is the database server's (clock_timestamp(): now, not the start of a long transaction),
// so every instance agrees on expiry whatever its own clock says.
export function statements(table: string): IdempotencyStatements {
  return {
    // One run of a key at a time, held to the end of the transaction the run is part of.
    // Not waiting for it is the point: a repeat while the first runs answers "in progress".
    lock: `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked`,
    // Absent, or expired: the row is this run's, in progress until its lease ends.
    take: `INSERT INTO ${table} AS t (key, fingerprint, token, state, result, expires_at)
VALUES ($1, $2, $3, 'p', NULL, clock_timestamp() + $4 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token, state = 'p',
  result = NULL, expires_at = EXCLUDED.expires_at
WHERE t.expires_at <= clock_timestamp()
RETURNING t.token`,
    read: `SELECT fingerprint, token, state, result FROM ${table} WHERE key = $1`,
    complete: `UPDATE ${table} SET state = 'd', result = $3, expires_at = clock_timestamp() + $4 * interval '1 millisecond'
WHERE key = $1 AND token = $2`,
    release: `DELETE FROM ${table} WHERE key = $1 AND token = $2 AND state = 'p'`,
    sweep: `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE expires_at <= clock_timestamp() LIMIT $1)`,
  };
}
