import { Agent, request } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { postgresUrl } from '../../../../test/support/servers.js';

/** One `POST /users` as its client saw it: a complete answer, or the error the call ended with. */
export interface Outcome {
  name: string;
  status?: number;
  body?: string;
  /** `ECONNREFUSED`, `ECONNRESET`, … (the answer was cut, or never came). */
  error?: string;
  /** Sent on a keep-alive connection that an earlier request had opened. */
  reused: boolean;
  ms: number;
}

/** A name no other request uses: 3–32 characters of the allowed set. */
export const uniqueUsername = (prefix: string): string => `${prefix}${randomUUID().replace(/-/g, '').slice(0, 16)}`;

/** `POST /users` for `name` on `agent` (keep-alive connections), its answer read to the end. */
export function register(url: string, agent: Agent, name: string, timeoutMs = 30_000): Promise<Outcome> {
  const started = performance.now();
  const body = JSON.stringify({ username: name });
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: Omit<Outcome, 'name' | 'reused' | 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ name, reused: req.reusedSocket, ms: performance.now() - started, ...outcome });
    };
    const req = request(
      `${url}/users`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done({ status: res.statusCode, body: text }));
        res.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.end(body);
  });
}

/** An answer in full: the status and the JSON body the service sends with it. */
export function complete(outcome: Outcome): boolean {
  if (outcome.status === undefined || outcome.body === undefined) return false;
  try {
    JSON.parse(outcome.body);
    return true;
  } catch {
    return false;
  }
}

/**
 * `clients` concurrent clients, each on keep-alive connections of its own, registering fresh
 * names until `until()` says stop (checked before each request) or `total` requests were sent.
 */
export async function registrationLoop(options: {
  url: string;
  clients: number;
  prefix: string;
  total?: number;
  until?: (outcome: Outcome) => boolean;
}): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let sent = 0;
  let stopped = false;
  const client = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (!stopped && (options.total === undefined || sent < options.total)) {
        sent++;
        const outcome = await register(options.url, agent, uniqueUsername(options.prefix));
        outcomes.push(outcome);
        if (options.until?.(outcome)) stopped = true;
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  return outcomes;
}

/** The p-th percentile (0–100) of `values`. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/**
 * A database of its own, empty (no table of any part exists yet: a first deployment), on the
 * test server; `drop()` removes it, whatever still connects to it.
 */
export async function freshDatabase(suite: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `${suite}_${randomUUID().replace(/-/g, '').slice(0, 12)}`.toLowerCase();
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** The sessions on database `name` that sit in an open transaction doing nothing (a connection held while waiting). */
export async function idleInTransaction(name: string): Promise<number> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state LIKE 'idle in transaction%'`,
      [name],
    );
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}
