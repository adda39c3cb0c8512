import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Agent } from 'node:http';
import { freePort } from '../../../test/support/server-provider.js';
import { mongoLabel, mongoUri, redisUrl, uniqueName } from '../../../test/support/servers.js';
import { sleep } from '../../../test/support/wait.js';
import type { AppConfig } from '../src/config/app-config.js';
import {
  complete,
  freshDatabase,
  idleInTransaction,
  percentile,
  register,
  registrationLoop,
  uniqueUsername,
  type Outcome,
} from './support/registrations.js';
import { createTestApp } from './support/test-app.js';

/** Connections of the app's PostgreSQL pool: far fewer than the burst, so requests queue for them. */
const POOL_MAX = 4;
const BURST = 48;
// Enough for every client to queue for the pool many times over; throughput is bench/'s question.
const SUSTAINED = 640;
const CLIENTS = 32;
const READY_WITHIN_MS = 150_000;
/** How long readiness may stay down past READY_WITHIN_MS without the outbox's pending count falling. */
const STALL_MS = 30_000;

interface Deployment {
  label: string;
  /** The stores, empty: no table, collection or key of the app exists yet. */
  open(): Promise<{ config: AppConfig; database?: string; drop(): Promise<void> }>;
}

const postgres = (prepareBackend: 'postgres' | 'redis'): Deployment['open'] =>
  async function open() {
    const database = await freshDatabase('load');
    return {
      config: {
        prepareBackend,
        repositoryBackend: 'postgres',
        machineId: 'postgres',
        databaseUrl: database.url,
        redisUrl: prepareBackend === 'redis' ? redisUrl() : undefined,
        prepareKeyPrefix: `${uniqueName('load')}:prepare`,
        postgresPoolMax: POOL_MAX,
        port: 0,
      },
      database: database.name,
      drop: database.drop,
    };
  };

const deployments: Deployment[] = [
  { label: 'PostgreSQL', open: postgres('postgres') },
  { label: 'Redis + PostgreSQL', open: postgres('redis') },
  {
    label: `Redis + ${mongoLabel()}`,
    open: async () => {
      const name = uniqueName('load');
      return {
        config: {
          prepareBackend: 'redis',
          repositoryBackend: 'mongo',
          machineId: 'redis',
          redisUrl: redisUrl(),
          mongodbUri: `${mongoUri().replace(/\/+$/, '')}/${name}`,
          prepareKeyPrefix: `${name}:prepare`,
          port: 0,
        },
        // The emulator keeps nothing after the run; test-environment.js removes the rest.
        drop: async () => {},
      };
    },
  },
];

/**
 * The sample under load, in this process, from a first start on empty stores: a burst of
 * concurrent first registrations (the tables are created at start-up, so no request waits for a
 * connection while holding one), then a sustained run. No 5xx, no timeout, no connection left
 * idle in a transaction, readiness still 200. How fast is bench/'s question, not this one's.
 */
describe('the sample under load from a fresh start', () => {
  let app: INestApplication | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await app?.close();
    await drop?.();
    app = drop = undefined;
  });

  it.each(deployments)(
    'on $label: 48 concurrent first registrations, then 640 from 32 clients, all answered',
    async ({ label, open }) => {
      const opened = await open();
      drop = opened.drop;
      app = await createTestApp(opened.config);
      const port = await freePort();
      await app.listen(port, '127.0.0.1');
      const url = `http://127.0.0.1:${port}`;

      // Each name asked for twice, each request on a connection of its own, all at once.
      const names = Array.from({ length: BURST / 2 }, () => uniqueUsername('lb'));
      const agents = Array.from({ length: BURST }, () => new Agent({ keepAlive: false }));
      const burst = await Promise.all(agents.map((agent, i) => register(url, agent, names[i % names.length])));
      expect(burst.filter((o) => o.status !== 201 && o.status !== 409)).toEqual([]);
      // One winner a name.
      for (const name of names) expect(burst.filter((o) => o.name === name && o.status === 201)).toHaveLength(1);
      const readyAfterBurst = await expectSettled(url, opened.database);

      const started = performance.now();
      const sustained = await registrationLoop({ url, clients: CLIENTS, prefix: 'ls', total: SUSTAINED });
      const seconds = (performance.now() - started) / 1000;
      expect(sustained).toHaveLength(SUSTAINED);
      expect(sustained.filter((o) => !complete(o) || o.status !== 201)).toEqual([]);
      const readyAfterRun = await expectSettled(url, opened.database);

      process.stdout.write(
        `\n[load on ${label}] burst ${BURST}: p99 ${ms(percentile(latencies(burst), 99))}; ` +
          `sustained ${SUSTAINED} × ${CLIENTS} clients: ${Math.round(SUSTAINED / seconds)}/s, p99 ${ms(percentile(latencies(sustained), 99))}; ` +
          `ready ${ms(readyAfterBurst)} after the burst, ${ms(readyAfterRun)} after the run\n`,
      );
    },
    900_000,
  );
});

/**
 * After a run: nothing left holding a connection in a transaction, and the app ready. Readiness
 * includes the outbox: on a loaded machine the relay may trail the writes (on the MongoDB-wire
 * emulator above all, which another test file running beside this one slows to a few events a
 * second) and the probe's 1 s for the outbox store run out until it has caught up. So it is
 * polled for READY_WITHIN_MS, and for longer while the relay keeps catching up: each new low of
 * the pending count gives it STALL_MS more. A relay that stopped draining, or a starved pool,
 * stays down: that fails here. Resolves to how long readiness took to come back.
 */
async function expectSettled(url: string, database: string | undefined): Promise<number> {
  if (database !== undefined) expect(await idleInTransaction(database)).toBe(0);
  const started = Date.now();
  let deadline = started + READY_WITHIN_MS;
  let fewestPending = Number.POSITIVE_INFINITY;
  let last = '';
  while (Date.now() < deadline) {
    const ready = await fetch(`${url}/health/ready`);
    if (ready.status === 200) return Date.now() - started;
    const body = await ready.text();
    last = `${ready.status} ${body}`;
    const pending = outboxPending(body);
    if (pending !== undefined && pending < fewestPending) {
      fewestPending = pending;
      deadline = Math.max(deadline, Date.now() + STALL_MS);
    }
    await sleep(250);
  }
  throw new Error(
    `readiness did not come back within ${Date.now() - started} ms (fewest outbox events pending: ${Number.isFinite(fewestPending) ? fewestPending : 'not reported'}; no new low for ${STALL_MS} ms): ${last}`,
  );
}

/** The outbox's pending count in a readiness answer (Terminus' `details`), when it has one. */
function outboxPending(body: string): number | undefined {
  try {
    return (JSON.parse(body) as { details?: { outbox?: { pending?: number } } }).details?.outbox?.pending;
  } catch {
    return undefined;
  }
}

const latencies = (outcomes: Outcome[]) => outcomes.map((o) => o.ms);
const ms = (n: number) => `${Math.round(n)} ms`;
