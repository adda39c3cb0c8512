import { Logger } from '@nestjs/common';
import type { Client, Pool } from 'pg';
import { quoteIdentifier } from './postgres-sql.utils.js';

const logger = new Logger('PostgresOutboxStore');

/**
 * LISTEN on `channel` on a connection of its own (from the pool's settings): `listener` runs on
 * every notification. A lost connection is reopened after a second; meanwhile the relay's polling
 * finds the events. Resolves a function that stops listening.
 */
export async function listenOnChannel(pool: Pool, channel: string, listener: () => void): Promise<() => Promise<void>> {
  const { default: pg } = await import('pg');
  let client: Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client((pool as unknown as { options: object }).options);
    next.on('notification', (message) => message.channel === channel && listener());
    const onLost = (error?: Error) => {
      if (stopped || client !== next) return;
      client = undefined;
      if (error) logger.warn(`LISTEN ${channel} connection lost (${error.message}); reconnecting, polling meanwhile`);
      next.end().catch(() => undefined);
      retry = setTimeout(() => void connect().catch(() => undefined), 1000);
      retry.unref();
    };
    next.on('error', onLost);
    next.on('end', () => onLost());
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${quoteIdentifier(channel, 'notifyChannel')}`);
      listener(); // events may have arrived while not listening
    } catch (error) {
      onLost(error as Error);
      throw error;
    }
  };
  await connect();
  return async () => {
    stopped = true;
    if (retry !== undefined) clearTimeout(retry);
    const current = client;
    client = undefined;
    await current?.end().catch(() => undefined);
  };
}
