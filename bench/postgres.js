// What the PostgreSQL benches share: the two commit modes every PostgreSQL row runs in, and
// how a row names the server it ran on.
//  - synchronous_commit off: a commit does not wait for its WAL flush, whose time on a shared
//    machine swings far more than the work measured, so the client-side costs weigh more;
//  - synchronous_commit on (PostgreSQL's default): what production sees, commit path included.
// Both are set per connection (pg's `options`), on every side of a row alike.
import pg from 'pg';
import { startPostgresCluster } from '../test/support/server-provider.js';

export const COMMIT_MODES = [
  { name: 'off', options: '-c synchronous_commit=off', label: 'synchronous_commit off' },
  { name: 'on', options: '-c synchronous_commit=on', label: 'synchronous_commit on (the default)' },
];

/** "PostgreSQL 15.20, fsync on, wal_level replica": what a commit costs depends on these. */
export async function serverFacts(pool) {
  const { rows } = await pool.query(
    `SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync, current_setting('wal_level') AS wal`,
  );
  return `PostgreSQL ${rows[0].version.split(' ')[0]}, fsync ${rows[0].fsync}, wal_level ${rows[0].wal}`;
}

/**
 * A private PostgreSQL cluster for the outbox rows: Debian's binaries (initdb, pg_ctl; see
 * test/support/server-provider.js) on a free port in a temp dir, removed by `stop`, with
 * `wal_level=logical` (pg-transactional-outbox reads its outbox by logical replication) and
 * fsync on (durable commits are measured). Every side of those rows runs on it.
 */
export async function privateLogicalCluster() {
  try {
    return await startPostgresCluster({
      settings: {
        wal_level: 'logical',
        fsync: 'on',
        max_wal_senders: 4,
        max_replication_slots: 4,
        max_connections: 100,
      },
    });
  } catch (error) {
    throw new Error(
      `cannot start a private PostgreSQL cluster with wal_level=logical (apt-get install postgresql for /usr/lib/postgresql/*/bin): ${error.message}`,
      { cause: error },
    );
  }
}

/**
 * A pg.Pool for a bench. pg-pool's end() resolves before the connections it closes have gone,
 * and the run drops its database (or stops its cluster) right after the last bench: a
 * connection still closing then hears the server's "terminating connection", which a pool
 * without an 'error' listener would throw out of the process.
 */
export function benchPool(config) {
  const pool = new pg.Pool(config);
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Drops a bench's tables, and the record of the migrations that made them (ddd_kit_migrations),
 * so that the next row's parts create them again: a table dropped while its migrations stay
 * recorded is reported missing, as it would be in an application.
 */
export async function dropBenchTables(pool, tables) {
  await pool.query(`DROP TABLE IF EXISTS ${[...tables, 'ddd_kit_migrations'].map((t) => `"${t}"`).join(', ')}`);
}
