import type { Pool } from 'pg';
import { RepositoryConfigurationError } from '../../errors.js';
import { quoteIdentifier } from '../postgres/postgres-sql.utils.js';

/** What start-up makes sure of: `wal_level`, the publication, the slot (pgoutput, in the pool's database). */
export interface WalSetup {
  readonly pool: Pool;
  readonly slot: string;
  readonly publication: string;
  /** Create the slot and publication when missing (else: fail naming what to run). */
  readonly create: boolean;
}

/** The statements that create what the store reads from, for teams that migrate by hand. */
export function walSetupStatements(setup: Pick<WalSetup, 'slot' | 'publication'>): string[] {
  return [
    `CREATE PUBLICATION ${quoteIdentifier(setup.publication, 'publication')}`,
    `SELECT pg_create_logical_replication_slot('${setup.slot}', 'pgoutput')`,
  ];
}

/**
 * Checks `wal_level` first (a clear error naming the setting and how to set it), then creates
 * (or checks) the publication pgoutput needs (empty: messages need no table) and the slot. The
 * slot must exist before the first write: a message written before it is never read.
 */
export async function ensureWalSetup(setup: WalSetup): Promise<void> {
  const { pool, slot, publication } = setup;
  const level = (await pool.query<{ level: string }>("SELECT current_setting('wal_level') AS level")).rows[0].level;
  if (level !== 'logical') {
    throw new RepositoryConfigurationError(
      `PostgresWalOutboxStore needs wal_level = logical, and this PostgreSQL runs wal_level = ${level}. ` +
        "Set it with ALTER SYSTEM SET wal_level = 'logical' (or wal_level = logical in postgresql.conf, " +
        '-c wal_level=logical on the command line) and restart PostgreSQL; or use PostgresOutboxStore, which needs no setting.',
    );
  }
  const [createPublication, createSlot] = walSetupStatements(setup);
  const published = await pool.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [publication]);
  if (published.rowCount === 0) {
    if (!setup.create) throw missing(`publication ${publication}`, createPublication);
    await pool.query(createPublication).catch(unlessCreatedMeanwhile);
  }
  const found = await pool.query<{ plugin: string; database: string; current: string }>(
    'SELECT plugin, database, current_database() AS current FROM pg_replication_slots WHERE slot_name = $1',
    [slot],
  );
  const existing = found.rows[0];
  if (existing === undefined) {
    if (!setup.create) throw missing(`replication slot ${slot}`, createSlot);
    await pool.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]).catch(unlessCreatedMeanwhile);
  } else if (existing.plugin !== 'pgoutput' || existing.database !== existing.current) {
    throw new RepositoryConfigurationError(
      `PostgresWalOutboxStore: replication slot ${slot} exists but is not a pgoutput slot of database ${existing.current} ` +
        `(plugin ${existing.plugin}, database ${existing.database}): name another slot, or drop it (SELECT pg_drop_replication_slot('${slot}')).`,
    );
  }
}

function missing(what: string, statement: string): RepositoryConfigurationError {
  return new RepositoryConfigurationError(
    `PostgresWalOutboxStore: ${what} does not exist. Create it (${statement}) or let the store create it (createTables: true, the default).`,
  );
}

/** Another process created it between the check and the statement: fine. */
function unlessCreatedMeanwhile(error: { code?: string }): void {
  if (error.code !== '42710' && error.code !== '23505') throw error;
}
