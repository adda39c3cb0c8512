import { Logger } from '@nestjs/common';
import type { Client, Pool } from 'pg';
import { quoteIdentifier } from './postgres-sql.utils.js';

const logger = new Logger('PostgresOutboxStore');

/** The first wait before reopening a lost LISTEN connection; each failed try doubles it, up to LISTEN_RETRY_MAX_MS. */
export const LISTEN_RETRY_FIRST_MS = 250;
/** The longest wait between two tries while PostgreSQL stays away. */
export const LISTEN_RETRY_MAX_MS = 10_000;

/**
 * LISTEN on `channel` on a connection of its own (from the pool's settings): `listener` runs on
 * every notification. A lost connection (a restart ends it with 57P01 or 57P02, a network cut
 * resets it) is reopened with backoff — LISTEN_RETRY_FIRST_MS, doubled after each failed try up to
 * LISTEN_RETRY_MAX_MS, from the first again once listening — and never ends the process; meanwhile
 * the relay's polling finds the events, and once listening again `listener` runs at once for those
 * notified while it was away. One warning an outage, one line when it is over. Resolves a
 * function that stops listening.
 */
export async function listenOnChannel(pool: Pool, channel: string, listener: () => void): Promise<() => Promise<void>> {
  const { default: pg } = await import('pg');
  let client: Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let waitMs = LISTEN_RETRY_FIRST_MS;
  let lost = false;
  const connect = async (): Promise<void> => {
    const next = new pg.Client((pool as unknown as { options: object }).options);
    next.on('notification', (message) => message.channel === channel && listener());
    const onLost = (error?: Error) => {
      if (stopped || client !== next) return;
      client = undefined;
      if (!lost)
        logger.warn(
          `LISTEN ${channel} connection lost${error ? ` (${error.message})` : ''}; reconnecting, polling meanwhile`,
        );
      lost = true;
      next.end().catch(() => undefined);
      retry = setTimeout(() => void connect().catch(() => undefined), waitMs);
      retry.unref();
      waitMs = Math.min(waitMs * 2, LISTEN_RETRY_MAX_MS);
    };
    next.on('error', onLost);
    next.on('end', () => onLost());
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${quoteIdentifier(channel, 'notifyChannel')}`);
    } catch (error) {
      onLost(error as Error);
      throw error;
    }
    if (client !== next) return; // lost again meanwhile, or stopped
    waitMs = LISTEN_RETRY_FIRST_MS;
    if (lost) logger.log(`LISTEN ${channel}: listening again`);
    lost = false;
    listener(); // events may have arrived while not listening
  };
  try {
    await connect();
  } catch (error) {
    // Not listening at all: the caller hears of it (start-up fails), and nothing retries behind it.
    stopped = true;
    if (retry !== undefined) clearTimeout(retry);
    throw error;
  }
  return async () => {
    stopped = true;
    if (retry !== undefined) clearTimeout(retry);
    const current = client;
    client = undefined;
    await current?.end().catch(() => undefined);
  };
}
