// The SQL of PostgresPrepareKeyFactory. One table holds every name's records:
//   name, key   the primary key
//   value       canonical JSON, compared as text; NULL marks a tombstone (what a rollback leaves
//               for TOMBSTONE_MS, so that the same statement run twice answers as the first run)
//   ttl_at      epoch ms; the record holds its key until then
//   op          the operation that last wrote the row
//   drop_at     epoch ms after which the sweep deletes the row (NULL: never)
// Expiry is decided by the database server's clock (clock_timestamp(), the real time even inside
// a long transaction), so every instance of an application agrees on it. Every value is a
// parameter; only the validated, quoted table name is spliced in.

export const TOMBSTONE_MS = 120_000;

const NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export function ddl(table: string, indexName: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  name text NOT NULL,
  key text NOT NULL,
  value text,
  ttl_at bigint,
  op text NOT NULL,
  drop_at bigint,
  PRIMARY KEY (name, key)
)`,
    `CREATE INDEX IF NOT EXISTS ${indexName} ON ${table} (drop_at) WHERE drop_at IS NOT NULL`,
  ];
}

export interface PrepareKeyStatements {
  /** $1 name, $2 key, $3 value, $4 ttl_at, $5 op, $6 drop_at → a row when written. */
  prepare: string;
  /** $1 name, $2 key → now, and value/ttl_at when a live record exists. */
  read: string;
  /** $1 name, $2 keys (text[]) → now (every row), and key/value/ttl_at of each live record among them. */
  readMany: string;
  /** $1 name, $2 key, $3 op [, $4 expected value or op] → a row when deleted. */
  rollback: string;
  rollbackIfValue: string;
  rollbackIfOp: string;
  /** $1 name, $2 key, $3 value, $4 ttl_at, $5 op, $6 drop_at [, $7 expected value] → a row when replaced. */
  reprepare: string;
  reprepareIfValue: string;
  /** $1 name, $2 cursor (exclusive; NULL: from the start), $3 limit. */
  page: string;
  /** $1 batch size → the rows deleted. */
  sweep: string;
}

export function statements(table: string): PrepareKeyStatements {
  // A row past its drop time is gone, as if the sweep had already run.
  const live = `value IS NOT NULL AND (drop_at IS NULL OR drop_at > ${NOW})`;
  const tombstone = `value = NULL, ttl_at = NULL, op = $3, drop_at = ${NOW} + ${TOMBSTONE_MS}`;
  const own = `(value IS NULL AND op = $3)`;
  return {
    prepare: `INSERT INTO ${table} AS r (name, key, value, ttl_at, op, drop_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (name, key) DO UPDATE SET value = EXCLUDED.value, ttl_at = EXCLUDED.ttl_at, op = EXCLUDED.op, drop_at = EXCLUDED.drop_at
WHERE r.value IS NULL OR r.ttl_at <= ${NOW} OR r.op = EXCLUDED.op OR r.drop_at <= ${NOW}
RETURNING 1`,
    read: `SELECT ${NOW} AS now, r.value, r.ttl_at FROM (SELECT 1) AS one
LEFT JOIN ${table} AS r ON r.name = $1 AND r.key = $2 AND r.value IS NOT NULL AND (r.drop_at IS NULL OR r.drop_at > ${NOW})`,
    readMany: `SELECT ${NOW} AS now, r.key, r.value, r.ttl_at FROM (SELECT 1) AS one
LEFT JOIN ${table} AS r ON r.name = $1 AND r.key = ANY($2::text[]) AND r.value IS NOT NULL AND (r.drop_at IS NULL OR r.drop_at > ${NOW})`,
    rollback: `UPDATE ${table} SET ${tombstone} WHERE name = $1 AND key = $2 AND ((${live}) OR ${own}) RETURNING 1`,
    rollbackIfValue: `UPDATE ${table} SET ${tombstone} WHERE name = $1 AND key = $2 AND ((${live} AND value = $4) OR ${own}) RETURNING 1`,
    rollbackIfOp: `UPDATE ${table} SET ${tombstone} WHERE name = $1 AND key = $2 AND ((${live} AND op = $4) OR ${own}) RETURNING 1`,
    reprepare: `UPDATE ${table} SET value = $3, ttl_at = $4, op = $5, drop_at = $6
WHERE name = $1 AND key = $2 AND ${live} AND (op = $5 OR ttl_at > ${NOW}) RETURNING 1`,
    reprepareIfValue: `UPDATE ${table} SET value = $3, ttl_at = $4, op = $5, drop_at = $6
WHERE name = $1 AND key = $2 AND ${live} AND (op = $5 OR value = $7) RETURNING 1`,
    // In the column's own collation, which the primary key is sorted by: each page is a range of
    // the index (another collation would sort the whole name's rows for every page).
    page: `SELECT key, value, ttl_at FROM ${table}
WHERE name = $1 AND ${live} AND ($2::text IS NULL OR key > $2::text)
ORDER BY key LIMIT $3`,
    sweep: `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE drop_at <= ${NOW} LIMIT $1)`,
  };
}
