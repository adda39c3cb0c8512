// The sample under sustained load: `POST /users` from 32 keep-alive clients on loopback, each a
// fresh name (a 201 checked for each), against the built app in a process of its own
// (`node apps/registration/dist/main.js`, as an operator runs it), on a fresh database. Each
// store deployment beside the same requests on the memory backends (a second app process,
// running throughout), in alternating slices:
// - throughput: registrations/s, ratio store ÷ memory;
// - p99 latency of a registration, ratio memory's ÷ the store's (below 1: the store's is longer).
// The stores' share of each request is what the ratios show: the HTTP, validation and ID work is
// the same on both sides.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from '../test/support/server-provider.js';
import { serverFacts, benchPool } from './postgres.js';
import { median, notes, pairsOf, percentile, ratioSummary, sliceMs } from './util.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'registration', 'dist', 'main.js');
const CLIENTS = 32;
const WARM_MS = sliceMs(3000);
const SLICE_MS = sliceMs(2000);
const PAIRS = pairsOf(4);

export default async function registrationBench({ log }) {
  const memory = await startApp({ MACHINE_ID: '0' });
  const rows = [];
  try {
    for (const deployment of deployments()) {
      const opened = await deployment.open();
      const app = await startApp(opened.env);
      try {
        rows.push(
          ...(await rowsFor({
            label: deployment.label,
            app,
            memory,
            server: opened.server,
            pending: opened.pending,
            log,
          })),
        );
      } finally {
        await app.stop();
        await opened.drop();
      }
    }
  } finally {
    await memory.stop();
  }
  return rows;
}

function deployments() {
  const postgres = (prepare) => async () => {
    const database = await freshDatabase();
    const name = `bench_${randomUUID().slice(0, 8)}`;
    return {
      env: {
        PREPARE_BACKEND: prepare,
        REPOSITORY_BACKEND: 'postgres',
        MACHINE_ID: 'postgres',
        DATABASE_URL: database.url,
        ...(prepare === 'redis' ? { REDIS_URL: process.env.REDIS_URL, PREPARE_KEY_PREFIX: `${name}:prepare` } : {}),
      },
      server: database.server,
      drop: database.drop,
      pending: database.pendingEvents,
    };
  };
  return [
    { label: 'PostgreSQL', open: postgres('postgres') },
    { label: 'Redis + PostgreSQL', open: postgres('redis') },
    {
      label: `Redis + ${process.env.DDD_KIT_MONGODB_URI_SOURCE?.includes('jongodb') ? 'the MongoDB-wire emulator' : 'MongoDB'}`,
      open: async () => {
        const name = `bench_${randomUUID().slice(0, 8)}`;
        return {
          env: {
            PREPARE_BACKEND: 'redis',
            REPOSITORY_BACKEND: 'mongo',
            MACHINE_ID: 'redis',
            REDIS_URL: process.env.REDIS_URL,
            MONGODB_URI: `${process.env.MONGODB_URI.replace(/\/+$/, '')}/${name}`,
            PREPARE_KEY_PREFIX: `${name}:prepare`,
          },
          server: process.env.DDD_KIT_MONGODB_URI_SOURCE ?? 'MongoDB',
          drop: async () => {},
        };
      },
    },
  ];
}

async function rowsFor({ label, app, memory, server, pending, log }) {
  await slice(app.url, WARM_MS);
  await slice(memory.url, WARM_MS);
  const sides = { store: [], memory: [] };
  // The events the store side's slice left for its relay: work a slice did not pay for.
  const left = [];
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? ['memory', 'store'] : ['store', 'memory'];
    for (const side of order) {
      sides[side].push(await slice(side === 'store' ? app.url : memory.url, SLICE_MS));
      if (side === 'store' && pending !== undefined) left.push(await pending());
    }
  }
  const ratios = (f) => sides.store.map((s, i) => f(s, sides.memory[i]));
  const throughput = ratioSummary(ratios((s, m) => s.opsPerSec / m.opsPerSec));
  const p99 = ratioSummary(ratios((s, m) => m.p99 / s.p99));
  const store = { ops: median(sides.store.map((s) => s.opsPerSec)), p99: median(sides.store.map((s) => s.p99)) };
  const mem = { ops: median(sides.memory.map((s) => s.opsPerSec)), p99: median(sides.memory.map((s) => s.p99)) };
  log(
    `${label}: ${Math.round(store.ops)} registrations/s, p99 ${store.p99.toFixed(1)} ms; memory ${Math.round(mem.ops)}/s, p99 ${mem.p99.toFixed(1)} ms`,
  );
  const settings =
    `${CLIENTS} keep-alive clients on loopback, POST /users with a fresh name each (201 checked), the app in a process of its own ` +
    `(dist/main.js, default settings), on an empty database; ${PAIRS} alternating pairs of ${SLICE_MS / 1000} s slices after ${WARM_MS / 1000} s of warm-up per side`;
  const common = {
    subject: `the sample on ${label}`,
    baseline: 'the sample on the memory backends',
    pairs: PAIRS,
    settings: notes(settings, server),
  };
  return [
    {
      case: `sustained registrations, ${CLIENTS} clients, ${label}: throughput`,
      ...common,
      ops: store.ops,
      baselineOps: mem.ops,
      ...throughput,
      note: notes(
        'registrations/s; ratio: the median over pairs of the store side ÷ the memory side',
        left.length > 0
          ? `outbox events still pending at the end of each store slice (left to its relay): ${left.join(', ')}`
          : undefined,
      ),
    },
    {
      case: `sustained registrations, ${CLIENTS} clients, ${label}: p99 latency`,
      ...common,
      unit: 'ms',
      ops: store.p99,
      baselineOps: mem.p99,
      ...p99,
      note: "each slice's p99; ratio: the median over pairs of memory's p99 ÷ the store's (below 1: a registration waits longer on the store)",
    },
  ];
}

/** `CLIENTS` clients registering fresh names for `ms`: registrations/s and the p99 latency (ms), every answer a 201. */
async function slice(url, ms) {
  const latencies = [];
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        while (performance.now() < deadline) {
          const before = performance.now();
          await register(url, agent);
          latencies.push(performance.now() - before);
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { opsPerSec: latencies.length / seconds, p99: percentile(latencies, 99) };
}

function register(url, agent) {
  const username = `b${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const body = JSON.stringify({ username });
  return new Promise((resolve, reject) => {
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
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          if (res.statusCode !== 201 || JSON.parse(text).username !== username)
            reject(new Error(`POST /users ${username}: ${res.statusCode} ${text}`));
          else resolve();
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`POST /users ${username}: no answer in 30 s`)));
    req.end(body);
  });
}

/** The built app in a process of its own on a free port, once it answers /health/ready. */
async function startApp(env) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PREPARE_BACKEND: '',
      REPOSITORY_BACKEND: '',
      REDIS_URL: '',
      MONGODB_URI: '',
      DATABASE_URL: '',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the app exited before it was ready:\n${output}`);
    const ready = await fetch(`${url}/health/ready`).catch(() => undefined);
    if (ready?.ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the app was not ready within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** An empty database of its own on the bench's PostgreSQL, dropped afterwards. */
async function freshDatabase() {
  const name = `bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = async (work) => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const pool = benchPool({ connectionString: url.toString(), max: 1 });
  const server = await serverFacts(pool).finally(() => pool.end());
  return {
    url: url.toString(),
    server,
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
    /** Events the sample's outbox (its default table) holds, not yet delivered. */
    pendingEvents: async () => {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return Number((await client.query('SELECT count(*) AS n FROM ddd_kit_outbox WHERE dead_at IS NULL')).rows[0].n);
      } finally {
        await client.end();
      }
    },
  };
}
