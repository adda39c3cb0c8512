import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import pg from 'pg';
import { freePort, startPostgresCluster } from '../../../test/support/server-provider.js';
import { waitFor } from '../../../test/support/wait.js';
import { AppProcess } from './support/app-process.js';

/**
 * A PostgreSQL restart is an outage, never a crash. The built app, on a PostgreSQL cluster of
 * this test's own (reservations, users, machine-ID lease and outbox all on it), under a mixed
 * load — clients that check a name and register it, rename and delete their own users over
 * keep-alive connections —
 * while the cluster is restarted fast twice and immediately once: the process stays up, the only
 * 5xx is 503, registrations get 201 again within 15 s of the store coming back, and at the end
 * the database holds exactly what the answers said.
 */

/** The promise: registrations are served again within 15 s of PostgreSQL accepting connections. */
const BACK_WITHIN_MS = 15_000;
/**
 * A request during the outage is answered (503) within the pool's connection wait (5 s by
 * default): asserted with a wide margin, as a bound on hanging, not on speed.
 */
const ANSWER_WITHIN_MS = 15_000;

interface Answer {
  status?: number;
  body?: { id?: string; version?: number; secret?: string };
  /** ECONNRESET, … when no answer came. */
  error?: string;
  ms: number;
  /** When the request was sent (Date.now()). */
  sentAt: number;
}

interface Sent extends Answer {
  op: 'check' | 'register' | 'rename' | 'delete';
}

/** One user a client made, and what the answers say the database holds for it. */
interface Mine {
  id: string;
  secret?: string;
  version: number;
  username: string;
  deleted: boolean;
  /** False once a write on it got no clear answer (a 503 or a cut connection may have committed). */
  known: boolean;
}

function call(
  url: string,
  agent: Agent,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const sentAt = Date.now();
  const started = performance.now();
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: Omit<Answer, 'ms' | 'sentAt'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...answer, ms: performance.now() - started, sentAt });
    };
    const req = request(
      `${url}${path}`,
      {
        method,
        agent,
        headers: {
          ...headers,
          ...(text === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }),
        },
      },
      (res) => {
        let raw = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (raw += chunk));
        res.on('end', () => {
          let parsed: Answer['body'];
          try {
            parsed = raw === '' ? undefined : JSON.parse(raw);
          } catch {
            parsed = undefined;
          }
          done({ status: res.statusCode, body: parsed });
        });
        res.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    req.end(text);
  });
}

describe('PostgreSQL restarted under load (the sample on PostgreSQL alone)', () => {
  let cluster: Awaited<ReturnType<typeof startPostgresCluster>>;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(() => cluster?.stop());

  it('restarted fast twice and immediately once: the app stays up, only 503s, 201s again within 15 s, every answer stored', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const app = new AppProcess({
      PREPARE_BACKEND: 'postgres',
      REPOSITORY_BACKEND: 'postgres',
      MACHINE_ID: 'postgres',
      DATABASE_URL: cluster.url,
      PORT: String(port),
    });
    const sent: Sent[] = [];
    const users: Mine[] = [];
    let stopped = false;
    try {
      await app.waitForHealth(url);

      const client = async (c: number) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        const mine: Mine[] = [];
        try {
          for (let i = 0; !stopped; i++) {
            const live = mine.filter((u) => !u.deleted && u.known);
            const roll = (i * 7 + c) % 10;
            if (roll < 5 || live.length === 0) {
              const username = `u${c}-${i}-${randomUUID().slice(0, 8)}`;
              // As a sign-up form does: is the name free? Then take it.
              sent.push({ op: 'check', ...(await call(url, agent, 'GET', `/usernames/${username}`)) });
              const answer = await call(url, agent, 'POST', '/users', { username });
              sent.push({ op: 'register', ...answer });
              if (answer.status === 201) {
                const user = {
                  id: answer.body!.id!,
                  secret: answer.body!.secret,
                  version: answer.body!.version!,
                  username,
                  deleted: false,
                  known: true,
                };
                mine.push(user);
                users.push(user);
              }
              continue;
            }
            const user = live[i % live.length]!;
            const auth: Record<string, string> = user.secret ? { authorization: `Bearer ${user.secret}` } : {};
            if (roll < 8) {
              const username = `n${c}-${i}-${randomUUID().slice(0, 8)}`;
              const answer = await call(
                url,
                agent,
                'PATCH',
                `/users/${user.id}/username`,
                { username },
                { ...auth, 'if-match': String(user.version) },
              );
              sent.push({ op: 'rename', ...answer });
              if (answer.status === 200) {
                user.username = username;
                user.version = answer.body!.version!;
              } else user.known = false;
            } else {
              const answer = await call(url, agent, 'DELETE', `/users/${user.id}`, undefined, {
                ...auth,
                'if-match': String(user.version),
              });
              sent.push({ op: 'delete', ...answer });
              if (answer.status === 204) user.deleted = true;
              else user.known = false;
            }
          }
        } finally {
          agent.destroy();
        }
      };
      const load = Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));

      const registered = () => sent.filter((s) => s.op === 'register' && s.status === 201).length;
      const restarts: Array<{ mode: 'fast' | 'immediate' }> = [
        { mode: 'fast' },
        { mode: 'fast' },
        { mode: 'immediate' },
      ];
      for (const { mode } of restarts) {
        const before = registered();
        await waitFor(`50 more registrations before the ${mode} restart`, () => registered() >= before + 50);
        const haltedAt = Date.now();
        await cluster.halt({ mode });
        // The outage is seen: some request sent while the store was down got its answer.
        await waitFor(`a request answered during the ${mode} outage`, () =>
          sent.some((s) => s.sentAt >= haltedAt && s.status !== undefined && s.status >= 500),
        );
        await cluster.start();
        const backAt = Date.now();
        await waitFor(
          `a registration sent after the ${mode} restart to get 201 (the promise: within ${BACK_WITHIN_MS} ms)`,
          () => sent.some((s) => s.op === 'register' && s.status === 201 && s.sentAt >= backAt),
          { timeoutMs: BACK_WITHIN_MS },
        );
        expect(app.running).toBe(true);
      }
      stopped = true;
      await load;
      // Never a crash: SIGTERM finds it running, and it ends on its own.
      const exit = await app.stop(30_000);
      expect(exit.signal === 'SIGTERM' || exit.code === 0).toBe(true);
    } finally {
      stopped = true;
      await app.kill();
    }

    const statuses = countBy(sent);
    process.stdout.write(`\n[postgres restarts under load] ${JSON.stringify(statuses)}\n`);
    expect(app.output).not.toMatch(/Unhandled|uncaught/i);
    // The only 5xx is 503, and every request was answered: none was cut or left hanging.
    const notAnswered = (s: Sent) => s.status === undefined || (s.status >= 500 && s.status !== 503);
    expect(countBy(sent.filter(notAnswered))).toEqual({});
    expect(sent.filter((s) => s.ms >= ANSWER_WITHIN_MS)).toEqual([]);
    expect(sent.some((s) => s.status === 503)).toBe(true);

    // The database holds what the answers said: every 201 is stored (renamed or deleted only as answered).
    const pool = new pg.Pool({ connectionString: cluster.url });
    try {
      const { rows } = await pool.query<{ id: string; username: string }>('SELECT id, username FROM users');
      const stored = new Map(rows.map((row) => [row.id, row.username]));
      const known = users.filter((u) => u.known);
      expect(known.filter((u) => !u.deleted && stored.get(u.id) !== u.username)).toEqual([]);
      expect(known.filter((u) => u.deleted && stored.has(u.id))).toEqual([]);
    } finally {
      await pool.end();
    }
  }, 300_000);
});

/** How many requests of each kind got each status (or error). */
function countBy(sent: Sent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of sent) {
    const key = `${s.op} ${s.status ?? s.error}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
