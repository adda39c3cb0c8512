import { Logger } from '@nestjs/common';
import { describePool } from './describe-pool.js';
import type { PgPool } from './pg.interfaces.js';
import { PgConnectionError } from '../errors.js';

/** True for an error the server sent (it answered): anything else means it was not reached. */
export function isServerError(error: unknown): boolean {
  return typeof (error as { severity?: unknown } | null)?.severity === 'string';
}

/** The error a part reports when PostgreSQL does not answer: which part, where, and what to do. */
export function unreachable(owner: string, pool: object, cause: unknown, doing: string): PgConnectionError {
  const reason = cause instanceof Error ? cause.message || cause.name : String(cause);
  return new PgConnectionError(
    `${owner}: cannot reach PostgreSQL at ${describePool(pool)} ${doing} (${reason}). ` +
      'Start PostgreSQL, or correct its URL or the pool settings.',
    { cause },
  );
}

/** One round trip on `pool`, failing with a named error when PostgreSQL does not answer (start-up checks). */
export async function checkPool(pool: PgPool, owner: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    throw isServerError(error) ? error : unreachable(owner, pool, error, 'at start-up; the application did not start');
  }
}

/** What guardPool needs of a pg.Pool: its events. */
interface PoolEvents {
  on(event: 'connect' | 'acquire', listener: (client: ClientEvents) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  listenerCount(event: 'error'): number;
}

interface ClientEvents {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

const guardedPools = new WeakSet<object>();
const guardedClients = new WeakSet<object>();
const outageLogger = new Logger('PostgreSQL');
const ignore = (): void => undefined;

/**
 * Makes every connection of `pool`, owned or given, safe from a server that ends it (a restart
 * or failover sends 57P01 to each session): pg-pool listens for errors on an idle connection
 * only, and a connection handed to a waiting request can receive the server's FATAL message
 * before anyone listens, which Node turns into an uncaught 'error' event that ends the process.
 * Here each connection gets a listener of its own for its whole life, at its first checkout
 * (pg-pool's 'acquire', before the pool drops its own), and the pool one for idle connections
 * when it has none. The error itself reaches whoever uses the connection next: the statement in
 * flight fails, and the connection, no longer queryable, is released as broken. Idempotent.
 */
export function guardPool<P>(pool: P): P {
  const events = pool as unknown as Partial<PoolEvents> | null;
  if (events === null || typeof events !== 'object' || typeof events.on !== 'function') return pool;
  if (guardedPools.has(events)) return pool;
  guardedPools.add(events);
  const listen = (client: ClientEvents): void => {
    if (guardedClients.has(client)) return;
    guardedClients.add(client);
    client.on('error', ignore);
  };
  // One line an outage, not one for each connection it ends.
  let down = false;
  events.on('connect', (client) => {
    listen(client);
    if (down) outageLogger.log(`Connected again to ${describePool(pool as object)}`);
    down = false;
  });
  events.on('acquire', listen);
  if (typeof events.listenerCount === 'function' && events.listenerCount('error') === 0) {
    events.on('error', (error: Error) => {
      if (!down) outageLogger.warn(`${describePool(pool as object)}: an idle connection was closed (${error.message})`);
      down = true;
    });
  }
  return pool;
}

export interface OpenPoolOptions {
  /** A `postgres://` or `postgresql://` URL. */
  url: string;
  /** pg.Pool options (`max`, `ssl`, …) besides the URL. */
  poolOptions?: object;
}

/**
 * Opens a pg.Pool a module owns (`postgres: { url }`), checked with one round trip: an unreachable
 * server fails start-up with a named error, and the pool is ended (no reconnection loop left).
 * `pg` is loaded only here: users of other stores need not install it.
 */
export async function openPool(options: OpenPoolOptions, owner: string): Promise<PgPool> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ ...options.poolOptions, connectionString: options.url });
  // An idle connection the server drops emits 'error' on the pool; unheard, it would end the
  // process. The pool replaces the connection; the next query reports a lasting outage.
  const logger = new Logger(owner);
  pool.on('error', (error: Error) => logger.warn(`An idle PostgreSQL connection failed: ${error.message}`));
  guardPool(pool);
  try {
    await checkPool(pool as unknown as PgPool, owner);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return pool as unknown as PgPool;
}

/**
 * A small pool of its own made from `pool`'s settings (pg.Pool keeps them, and its class), for
 * work that must never wait behind requests holding every pooled connection: a lease heartbeat.
 * Its idle connections let the process exit. Anything but a pg.Pool is returned as it is.
 */
export function companionPool(pool: PgPool, overrides: { max: number }): PgPool & { end?(): Promise<void> } {
  const Pool = (pool as unknown as { constructor?: new (options: object) => PgPool }).constructor;
  const options = (pool as { options?: object }).options;
  if (typeof Pool !== 'function' || options === undefined || typeof (pool as { end?: unknown }).end !== 'function')
    return pool;
  // Idle connections that let the process exit need Client#unref (pg 8.7 and later).
  const Client = (pool as { Client?: { prototype?: { unref?: unknown } } }).Client;
  const exitOnIdle = typeof Client?.prototype?.unref === 'function' ? { allowExitOnIdle: true } : {};
  const companion = new Pool({ ...options, ...overrides, ...exitOnIdle }) as PgPool & {
    on(event: 'error', listener: () => void): unknown;
  };
  // An idle connection the server drops; the next statement reports a lasting outage.
  companion.on('error', () => undefined);
  return guardPool(companion);
}
