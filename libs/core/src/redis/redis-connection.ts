import type { Logger } from '@nestjs/common';
import type { Redis, RedisOptions } from 'ioredis';

/** Where a client the module owns connects: a URL, ioredis options, or both (options win). */
export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  url?: string;
  /** ioredis options (`maxRetriesPerRequest`, `tls`, `password`, …); `lazyConnect` is the module's. */
  options?: RedisOptions;
}

/** The URL without its password, for messages. */
export function describeRedis(connection: RedisConnectionOptions): string {
  if (connection.url === undefined)
    return `${connection.options?.host ?? '127.0.0.1'}:${connection.options?.port ?? 6379}`;
  try {
    const url = new URL(connection.url);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/** Refuses what cannot be a connection before anything is opened. */
export function connectionProblem(connection: unknown): string | undefined {
  if (connection === null || typeof connection !== 'object')
    return 'must be an object such as { url: "redis://localhost:6379" }';
  const { url, options } = connection as RedisConnectionOptions;
  if (url !== undefined && (typeof url !== 'string' || !/^rediss?:\/\//.test(url)))
    return `url must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`;
  if (options !== undefined && (options === null || typeof options !== 'object'))
    return 'options must be an object of ioredis options';
  if (url === undefined && options === undefined) return 'needs url (or ioredis options)';
  return undefined;
}

/**
 * Opens a client and waits until it is ready. When Redis cannot be reached the client is
 * closed (no reconnection loop left behind, no "Unhandled error event" lines) and the returned
 * promise rejects with `fail(cause)`. Once up, connection errors are logged once per outage
 * (ioredis keeps reconnecting; commands wait or fail per `maxRetriesPerRequest`).
 */
export async function openRedis(
  connection: RedisConnectionOptions,
  logger: Pick<Logger, 'warn' | 'log'>,
  fail: (cause: Error) => Error,
): Promise<Redis> {
  // Loaded only here: users of the other stores need not install ioredis.
  const { Redis } = await import('ioredis');
  const options: RedisOptions = { ...connection.options, lazyConnect: true };
  const client = connection.url === undefined ? new Redis(options) : new Redis(connection.url, options);
  let lastError: Error | undefined;
  let starting = true;
  let down = false;
  client.on('error', (error: Error) => {
    lastError = error;
    if (starting || client.status === 'end' || down) return;
    down = true;
    logger.warn(`Redis ${describeRedis(connection)}: ${error.message} (reconnecting)`);
  });
  client.on('ready', () => {
    if (down) logger.log(`Redis ${describeRedis(connection)}: connected again`);
    down = false;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw fail(lastError ?? (error as Error));
  }
  starting = false;
  return client;
}

/** QUIT (lets commands in flight finish), or drop the socket when Redis does not answer. */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  // QUIT would wait in the offline queue for a reconnection that may never come.
  if (client.status !== 'ready') return void client.disconnect();
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
