/** The statements of one PostgresIdempotencyStore, on its (quoted, checked) table. */
export interface IdempotencyStatements {
  claim: string;
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
    // One statement, one round trip, for a run's start. $1 key, $2 fingerprint, $3 token,
    // $4 lease, $5 the advisory lock's text.
    // - The lock: one run of a key at a time, held to the end of the transaction the run is part
    //   of. Not waiting for it is the point: a repeat while the first runs answers "in progress".
    // - Then, locked only: absent, or expired, the row is this run's (taken), in progress until
    //   its lease ends.
    // - Else the row as this statement's snapshot saw it, and whether it is still live. The
    //   snapshot predates the lock: a run that committed in between is not in it. A live row is
    //   current all the same (a committed row changes only once expired), so the caller trusts
    //   only a live one, and reads again otherwise.
    claim: `WITH lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(hashtextextended($5, 0)) AS locked),
taken AS (
  INSERT INTO ${table} AS t (key, fingerprint, token, state, result, expires_at)
  SELECT $1, $2, $3, 'p', NULL, clock_timestamp() + $4 * interval '1 millisecond' FROM lock WHERE lock.locked
  ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token, state = 'p',
    result = NULL, expires_at = EXCLUDED.expires_at
  WHERE t.expires_at <= clock_timestamp()
  RETURNING t.token
)
SELECT lock.locked, EXISTS (SELECT 1 FROM taken) AS taken, r.fingerprint, r.token, r.state, r.result,
  r.expires_at > clock_timestamp() AS live
FROM lock LEFT JOIN ${table} r ON lock.locked AND r.key = $1 AND NOT EXISTS (SELECT 1 FROM taken)`,
    read: `SELECT fingerprint, token, state, result FROM ${table} WHERE key = $1`,
    complete: `UPDATE ${table} SET state = 'd', result = $3, expires_at = clock_timestamp() + $4 * interval '1 millisecond'
WHERE key = $1 AND token = $2`,
    release: `DELETE FROM ${table} WHERE key = $1 AND token = $2 AND state = 'p'`,
    sweep: `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE expires_at <= clock_timestamp() LIMIT $1)`,
  };
}
