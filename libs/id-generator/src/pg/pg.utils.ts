import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';

/** What the PostgreSQL parts need of a query result. */
export interface PgResult {
  rows: any[];
  rowCount: number | null;
}

/** A pooled connection, as `pg.Pool#connect()` gives it. */
export interface PgPoolClient {
  query(text: string, values?: unknown[]): Promise<PgResult>;
  /** `release(true)` (or an error) destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean | Error): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * A node-postgres `pg.Pool` (structurally: anything with these two methods). The ID sources use
 * only the pool's own connections: never a transaction the caller has open (see the README).
 */
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<PgResult>;
  connect(): Promise<PgPoolClient>;
}

export function assertPool(pool: unknown, who: string): PgPool {
  const p = pool as Partial<PgPool> | null;
  if (!p || typeof p.query !== 'function' || typeof p.connect !== 'function') {
    throw new IdGeneratorOptionsError(
      `${who} needs a node-postgres pg.Pool (new pg.Pool({ connectionString })), not a single client or transaction`,
    );
  }
  return p as PgPool;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `"schema"."<prefix><name>"` (or unqualified: the connection's search_path) after checking the
 * parts are plain identifiers: names never come from a request, but are still never trusted.
 */
export function tableName(schema: string | undefined, prefix: string, name: string, option: string): string {
  if (schema !== undefined && (typeof schema !== 'string' || !IDENTIFIER.test(schema) || schema.length > 63)) {
    throw new IdGeneratorOptionsError(
      `${option}: schema must be a plain identifier (letters, digits, _; not starting with a digit; at most 63 characters), got ${JSON.stringify(schema)}`,
    );
  }
  const table = `${prefix}${name}`;
  if (
    typeof prefix !== 'string' ||
    (prefix !== '' && !IDENTIFIER.test(prefix)) ||
    !IDENTIFIER.test(table) ||
    table.length > 63
  ) {
    throw new IdGeneratorOptionsError(
      `${option}: tablePrefix must be empty or a plain identifier, and the table name at most 63 characters; got ${JSON.stringify(prefix)}`,
    );
  }
  return schema === undefined ? `"${table}"` : `"${schema}"."${table}"`;
}

/** The database server's clock as epoch milliseconds (clock_timestamp(): the moment the expression runs). */
export const DB_NOW_MS = 'floor(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * Runs `work` in a short transaction on a connection of its own (never the caller's). Any error
 * destroys the connection (the server then rolls back): a statement whose reply was lost or timed
 * out leaves nothing half-done for the pool's next user, and no ROLLBACK waits on a silent server.
 */
export async function inOwnTransaction<T>(pool: PgPool, work: (client: PgPoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection lost while checked out also emits 'error' (the pool listens only while it is
  // idle); the failed query already reports it, so the event must not crash the process.
  const ignore = (): void => undefined;
  client.on?.('error', ignore);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.off?.('error', ignore);
    client.release();
    return result;
  } catch (error) {
    // Destroyed: the listener stays, for an 'error' the closing connection may still emit.
    client.release(true);
    throw error;
  }
}

/**
 * Creates tables once per process and pool (an advisory lock serialises concurrent first uses:
 * CREATE TABLE IF NOT EXISTS alone can fail when two sessions race). `ddl` statements must be
 * idempotent. A failure is retried on the next use.
 */
export function onceCreated(pool: PgPool, ddl: string[]): () => Promise<void> {
  let created: Promise<void> | undefined;
  return () => {
    created ??= inOwnTransaction(pool, async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('ddd-kit:id-generator:ddl'))`);
      for (const statement of ddl) await client.query(statement);
    }).catch((error: unknown) => {
      created = undefined;
      throw error;
    });
    return created;
  };
}
