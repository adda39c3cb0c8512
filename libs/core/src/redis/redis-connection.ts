import type { Logger } from '@nestjs/common';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { processWide } from '../process-wide.js';

/**
 * ioredis's `commandTimeout` of a client a module opens, unless its options set one: a command
 * to a Redis that accepts the connection but does not answer fails after this long instead of
 * waiting for the whole stall. Above the operations' own deadline (operationTimeoutMs, 2 s by
 * default), which decides first; this one bounds the rest (PING, SCAN, a user's commands).
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/** Where a client the module owns connects: a URL, ioredis options, or both (options win). */
export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  url?: string;
  /**
   * ioredis options (`maxRetriesPerRequest`, `tls`, `password`, …); `lazyConnect` is the module's,
   * and `commandTimeout` is 5,000 ms unless set here.
   */
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
  const options: RedisOptions = {
    commandTimeout: DEFAULT_COMMAND_TIMEOUT_MS,
    ...connection.options,
    lazyConnect: true,
  };
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

// The clients already named in a warning: one line a client, however many modules it is given to.
const warnedClients = processWide('redis.clients-without-command-timeout', () => new WeakSet<object>());

/**
 * At start-up, for a client the application passes in: one warning (Nest Logger) when it has no
 * `commandTimeout`. ddd-kit's own operations are bounded by their `operationTimeoutMs` anyway;
 * the warning is about the client's other commands (a readiness PING, the application's own),
 * which would wait for as long as Redis does not answer.
 */
export function warnWithoutCommandTimeout(
  client: Redis | Cluster,
  logger: Pick<Logger, 'warn'>,
  givenTo: string,
): void {
  const options = client.isCluster
    ? (client as Cluster).options.redisOptions
    : ((client as Redis).options as RedisOptions | undefined);
  if (typeof options?.commandTimeout === 'number' && options.commandTimeout > 0) return;
  if (warnedClients.has(client)) return;
  warnedClients.add(client);
  logger.warn(
    `The Redis client given to ${givenTo} has no commandTimeout: a command other than ddd-kit's ` +
      `(bounded by operationTimeoutMs) waits for as long as Redis does not answer. Set commandTimeout ` +
      `(e.g. ${DEFAULT_COMMAND_TIMEOUT_MS}) in its options.`,
  );
}
