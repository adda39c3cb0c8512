// Resolves the servers the tests and the bench need, in this order for each one:
//   1. an explicit URL from the environment (REDIS_URL, REDIS_CLUSTER_NODES, MONGODB_URI,
//      DATABASE_URL, NATS_URL, RABBITMQ_URL);
//   2. testcontainers, when a Docker engine answers;
//   3. a local process started here on a free port (`redis-server` from Debian; the
//      `@jongodb/memory-server-bin-linux-x64-gnu` binary, a MongoDB-wire-compatible server).
// PostgreSQL: the machine's own server on 127.0.0.1:5432 comes before testcontainers, and a
// throwaway cluster from Debian's binaries (initdb, pg_ctl) after it. Every run then works in
// a database of its own, created here and dropped at the end.
// NATS with JetStream: the machine's own server on 127.0.0.1:4222 when it answers with
// JetStream enabled, then testcontainers, then `nats-server -js` from Debian on a free port.
// RabbitMQ: RABBITMQ_URL, else the machine's own broker on 127.0.0.1:5672 (guest/guest); nothing
// is started (a broker takes long to boot).
// Plain ESM JavaScript so Jest's globalSetup and `bench/run.js` share one implementation.
// A server that cannot be provided does not abort the run: its reason is recorded in
// DDD_KIT_<NAME>_ERROR and `test/support/servers.ts` turns it into a failing test that says
// which server is missing and how to provide it.
import { spawn, execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import net from 'node:net';
import http from 'node:http';
import { promisify } from 'node:util';
import { waitFor } from './wait.js';

const execFileAsync = promisify(execFile);
const require = createRequire(import.meta.url);

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function redisCli(port, ...args) {
  const { stdout } = await execFileAsync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout.trim();
}

function which(bin) {
  const dirs = (process.env.PATH ?? '').split(':');
  return dirs.some((d) => d && existsSync(join(d, bin)));
}

/** True when a Docker engine answers its ping on DOCKER_HOST or the default socket. */
export async function dockerAnswers() {
  const host = process.env.DOCKER_HOST;
  let socketPath = '/var/run/docker.sock';
  if (host?.startsWith('unix://')) socketPath = host.slice('unix://'.length);
  else if (host) return false; // remote engines: let the user pass explicit URLs instead
  if (!existsSync(socketPath)) return false;
  return new Promise((resolve) => {
    const req = http.get({ socketPath, path: '/_ping', timeout: 1500 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

function startProcess(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  let output = '';
  const watchers = new Set();
  const onData = (d) => {
    output += d;
    for (const watcher of watchers) watcher();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  child.output = () => output;
  /** Resolves once the process has printed something matching `pattern`; rejects if it exits first. */
  child.printed = (pattern) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (pattern.test(output)) {
          watchers.delete(check);
          child.off('exit', exited);
          resolve();
        }
      };
      const exited = () => {
        watchers.delete(check);
        reject(new Error(`${cmd} exited before printing ${pattern}: ${output.slice(-2_000)}`));
      };
      watchers.add(check);
      child.once('exit', exited);
      check();
    });
  return child;
}

function stopProcess(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/**
 * `start(port)` on a free port. Between freePort() releasing a port and the server binding it,
 * another process may take it (a parallel test's server): that start fails with "Address already
 * in use", and a new port is tried.
 */
async function onFreePort(start) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { port, started: await start(port) };
    } catch (err) {
      if (attempt >= 5 || !/Address already in use/i.test(String(err?.message))) throw err;
    }
  }
}

async function startRedisProcess(port, dir, extra = []) {
  const child = startProcess('redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--protected-mode',
    'no',
    ...extra,
  ]);
  await waitFor(`redis-server on port ${port} to accept connections`, child.printed(/Ready to accept connections/));
  return child;
}

/**
 * A redis-server of a test's own, on a free port, for a test that stops, wipes or silences its
 * store (never the run's shared one). `extra` are server arguments (say `--appendonly yes`).
 * `kill()` ends it at once (SIGKILL); `start()` starts it again on the same port and directory,
 * empty unless `extra` turned persistence on; `pause()`/`resume()` make it silent (SIGSTOP: it
 * keeps its connections and answers nothing) and wake it; `stop()` ends it and removes its files.
 */
export async function startRedisServer({ extra = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ddd-kit-own-redis-'));
  const free = await onFreePort((p) => startRedisProcess(p, dir, extra));
  const port = free.port;
  let child = free.started;
  const server = {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid;
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGCONT'); // a paused server dies at once too
      child.kill('SIGKILL');
      await exited;
    },
    start: async () => {
      child = await startRedisProcess(port, dir, extra);
    },
    restart: async () => {
      await server.kill();
      await server.start();
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    stop: async () => {
      child.kill('SIGCONT');
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

const HOW = {
  redis:
    'set REDIS_URL=redis://host:port, or run a Docker engine, or install redis-server (apt-get install redis-server)',
  cluster:
    'set REDIS_CLUSTER_NODES=host:port,host:port,..., or run a Docker engine, or install redis-server and redis-cli (apt-get install redis-server)',
  mongo:
    'set MONGODB_URI=mongodb://host:port, or run a Docker engine, or install the npm package @jongodb/memory-server-bin-linux-x64-gnu (npm install)',
  nats: 'set NATS_URL=nats://host:port (a server with JetStream), or run nats-server -js on 127.0.0.1:4222, or run a Docker engine, or install nats-server (apt-get install nats-server)',
  rabbitmq:
    'set RABBITMQ_URL=amqp://user:password@host:port, or run RabbitMQ on 127.0.0.1:5672 with the guest user (apt-get install rabbitmq-server)',
  postgres:
    'set DATABASE_URL=postgres://user@host:port/db, or run PostgreSQL on 127.0.0.1:5432 (trust auth), or run a Docker engine, or install PostgreSQL (apt-get install postgresql)',
};

async function provideRedis(docker) {
  if (process.env.REDIS_URL)
    return { url: process.env.REDIS_URL, source: 'REDIS_URL from the environment', stop: async () => {} };
  if (docker) {
    const { GenericContainer } = await import('testcontainers');
    const c = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
    return {
      url: `redis://${c.getHost()}:${c.getMappedPort(6379)}`,
      source: 'testcontainers redis:7-alpine',
      stop: () => c.stop(),
    };
  }
  if (!which('redis-server') || !which('redis-cli')) throw new Error(`Redis is not available: ${HOW.redis}`);
  const dir = mkdtempSync(join(tmpdir(), 'ddd-kit-redis-'));
  const { port, started: child } = await onFreePort((p) => startRedisProcess(p, dir));
  return {
    url: `redis://127.0.0.1:${port}`,
    source: `local redis-server started on port ${port}`,
    stop: async () => {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function provideRedisCluster() {
  if (process.env.REDIS_CLUSTER_NODES) {
    return {
      url: process.env.REDIS_CLUSTER_NODES,
      source: 'REDIS_CLUSTER_NODES from the environment',
      stop: async () => {},
    };
  }
  // A cluster in containers needs announced addresses the host can reach; local processes
  // are simpler and always available where redis-server is.
  const cluster = await startRedisCluster();
  return { url: cluster.url, source: cluster.source, stop: cluster.stop };
}

/**
 * A 3-master Redis Cluster of a test's own (local redis-server processes, no replicas, no
 * persistence), for a test that wipes one shard: `nodes[i]` is each master's address, `flush(i)`
 * empties master i (FLUSHALL: its slots stay its own, its keys are gone, as after a restart of a
 * node without persistence), `stop()` ends them and removes their files.
 */
export async function startRedisCluster() {
  if (!which('redis-server') || !which('redis-cli')) throw new Error(`Redis Cluster is not available: ${HOW.cluster}`);
  const dir = mkdtempSync(join(tmpdir(), 'ddd-kit-cluster-'));
  const ports = [];
  const children = [];
  try {
    for (let i = 0; i < 3; i++) {
      const { port, started } = await onFreePort((p) =>
        startRedisProcess(p, dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${p}.conf`,
          '--cluster-node-timeout',
          '5000',
        ]),
      );
      ports.push(port);
      children.push(started);
    }
    await execFileAsync('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await waitFor(`cluster node ${port} to report cluster_state:ok`, async () =>
        (await redisCli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
      );
    }
  } catch (err) {
    await Promise.all(children.map(stopProcess));
    throw err;
  }
  return {
    url: ports.map((p) => `127.0.0.1:${p}`).join(','),
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    source: `local 3-node Redis Cluster started on ports ${ports.join(', ')}`,
    flush: async (i) => {
      await redisCli(ports[i], 'FLUSHALL');
    },
    stop: async () => {
      await Promise.all(children.map(stopProcess));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function provideMongo(docker) {
  if (process.env.MONGODB_URI)
    return { url: process.env.MONGODB_URI, source: 'MONGODB_URI from the environment', stop: async () => {} };
  if (docker) {
    const { GenericContainer } = await import('testcontainers');
    const c = await new GenericContainer('mongo:7').withExposedPorts(27017).start();
    return {
      url: `mongodb://${c.getHost()}:${c.getMappedPort(27017)}`,
      source: 'testcontainers mongo:7',
      stop: () => c.stop(),
    };
  }
  let bin;
  try {
    bin = join(dirname(require.resolve('@jongodb/memory-server-bin-linux-x64-gnu/package.json')), 'bin', 'jongodb');
  } catch {
    throw new Error(`MongoDB is not available: ${HOW.mongo}`);
  }
  // Port 0: the emulator binds a port of its own choosing and prints it (no free-port race).
  const child = startProcess(bin, ['--host=127.0.0.1', '--port=0']);
  await waitFor('jongodb (MongoDB-wire emulator) to print its URI', child.printed(/JONGODB_URI=\S+?:\d+[/\s]/));
  const port = Number(/JONGODB_URI=\S+?:(\d+)[/\s]/.exec(child.output())[1]);
  return {
    url: `mongodb://127.0.0.1:${port}`,
    source: `local jongodb emulator started on port ${port} (not MongoDB: no TTL monitor)`,
    stop: () => stopProcess(child),
  };
}

/**
 * The INFO line a NATS server sends on connect, parsed; undefined when nothing answers at
 * host:port (or something that is not NATS).
 */
async function natsInfo(host, port, timeoutMs = 1500) {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let buf = '';
    const done = (info) => {
      socket.destroy();
      resolve(info);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.on('error', () => done(undefined));
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n');
      if (end < 0) return;
      const line = buf.slice(0, end);
      if (!line.startsWith('INFO ')) return done(undefined);
      try {
        done(JSON.parse(line.slice(5)));
      } catch {
        done(undefined);
      }
    });
  });
}

async function provideNats(docker) {
  if (process.env.NATS_URL)
    return { url: process.env.NATS_URL, source: 'NATS_URL from the environment', stop: async () => {} };
  const local = await natsInfo('127.0.0.1', 4222);
  if (local?.jetstream) {
    return {
      url: 'nats://127.0.0.1:4222',
      source: `the local NATS ${local.version} with JetStream on 127.0.0.1:4222`,
      stop: async () => {},
    };
  }
  if (docker) {
    const { GenericContainer } = await import('testcontainers');
    const c = await new GenericContainer('nats:2-alpine').withCommand(['-js']).withExposedPorts(4222).start();
    return {
      url: `nats://${c.getHost()}:${c.getMappedPort(4222)}`,
      source: 'testcontainers nats:2-alpine -js',
      stop: () => c.stop(),
    };
  }
  const why = local ? 'the server on 127.0.0.1:4222 has no JetStream' : 'nothing answers on 127.0.0.1:4222';
  if (!which('nats-server')) throw new Error(`NATS with JetStream is not available (${why}; no nats-server binary)`);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ddd-kit-nats-'));
  const child = startProcess('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir]);
  await waitFor(`nats-server -js on port ${port} to be ready`, child.printed(/Server is ready/));
  return {
    url: `nats://127.0.0.1:${port}`,
    source: `local nats-server -js started on port ${port} (${why})`,
    stop: async () => {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function provideRabbitMq() {
  const fromEnv = process.env.RABBITMQ_URL;
  const url = fromEnv ?? 'amqp://guest:guest@127.0.0.1:5672';
  const { default: amqp } = await import('amqplib');
  try {
    const connection = await amqp.connect(url, { timeout: 2_000 });
    await connection.close();
  } catch (err) {
    // A test then fails with this reason and how to provide a broker, not with the driver's error.
    delete process.env.RABBITMQ_URL;
    throw new Error(`RabbitMQ does not answer at ${fromEnv ? 'RABBITMQ_URL' : url} (${err.message})`, { cause: err });
  }
  return {
    url,
    source: fromEnv ? 'RABBITMQ_URL from the environment' : 'the local RabbitMQ on 127.0.0.1:5672',
    stop: async () => {},
  };
}

/** True when a PostgreSQL server answers at `url`. */
async function postgresAnswers(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postgresBinDir() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : undefined;
}

/**
 * A throwaway PostgreSQL cluster (initdb + pg_ctl) on a free port, in a temp dir removed by
 * `stop`; as the postgres user when run as root. `settings` are server parameters (`-c`) over
 * the defaults; the tests' default is `fsync` off, which a bench of durable commits turns on.
 * A test that restarts its store uses the rest: `restart({ mode })` (`pg_ctl restart`: `fast`
 * ends every session with 57P01, as a failover or a minor upgrade does; `immediate` is a crash),
 * `halt({ mode })` and `start()` for an outage of its own length.
 */
export async function startPostgresCluster({ settings = {} } = {}) {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const asRoot = process.getuid?.() === 0;
  const run = (cmd, args) =>
    asRoot
      ? execFileAsync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args])
      : execFileAsync(join(bin, cmd), args);
  const dir = mkdtempSync(join(tmpdir(), 'ddd-kit-pg-'));
  if (asRoot) await execFileAsync('chown', ['-R', 'postgres', dir]);
  const data = join(dir, 'data');
  const port = await freePort();
  const user = asRoot ? 'postgres' : (process.env.USER ?? 'postgres');
  const parameters = { listen_addresses: '127.0.0.1', fsync: 'off', ...settings };
  const options = [`-p ${port} -k ${dir}`, ...Object.entries(parameters).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const halt = ({ mode = 'fast' } = {}) => run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  const stop = async () => {
    if (existsSync(join(data, 'postmaster.pid'))) await halt({ mode: 'immediate' }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await run('initdb', ['-D', data, '-A', 'trust', '-U', user, '--no-sync']);
    await start();
  } catch (err) {
    await stop();
    throw err;
  }
  const shown = Object.entries(settings).map(([k, v]) => `${k}=${v}`);
  return {
    url: `postgres://${user}@127.0.0.1:${port}/postgres`,
    source: `throwaway PostgreSQL cluster (initdb) on port ${port}${shown.length ? ` (${shown.join(', ')})` : ''}`,
    port,
    restart: async ({ mode = 'fast' } = {}) => {
      await halt({ mode });
      await start();
    },
    halt: async (opts) => {
      await halt(opts);
    },
    start: async () => {
      await start();
    },
    stop,
  };
}

/**
 * A PostgreSQL with `wal_level = logical` (the outbox without a table reads a replication slot):
 * DATABASE_URL, else the local server on 127.0.0.1:5432, when it runs with it; else a throwaway
 * cluster started with `-c wal_level=logical`. `stop` stops only what was started here. Throws
 * a message saying how to provide one when none can be had.
 */
export async function provideLogicalPostgres() {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  let level;
  if (await postgresAnswers(url)) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      level = (await client.query('SHOW wal_level')).rows[0].wal_level;
    } finally {
      await client.end().catch(() => undefined);
    }
    if (level === 'logical') return { url, source: `${url} (wal_level = logical)`, stop: async () => {} };
  }
  try {
    return await startPostgresCluster({ settings: { wal_level: 'logical' } });
  } catch (err) {
    throw new Error(
      `No PostgreSQL with wal_level = logical: ${level === undefined ? `${url} does not answer` : `${url} runs wal_level = ${level}`}, ` +
        `and no throwaway cluster could be started (${err.message}). Provide one: set DATABASE_URL to a server run with ` +
        "wal_level = logical (ALTER SYSTEM SET wal_level = 'logical', then restart it), or install PostgreSQL's binaries (apt-get install postgresql) so a cluster can be started here.",
      { cause: err },
    );
  }
}

/** The server; then a database of this run's own on it, dropped by `stop` (the server's URL is used as is when that is not allowed). */
async function providePostgres(docker) {
  let server;
  if (process.env.DATABASE_URL) {
    server = { url: process.env.DATABASE_URL, source: 'DATABASE_URL from the environment', stop: async () => {} };
  } else if (await postgresAnswers('postgres://postgres@127.0.0.1:5432/postgres')) {
    server = {
      url: 'postgres://postgres@127.0.0.1:5432/postgres',
      source: 'the local PostgreSQL on 127.0.0.1:5432',
      stop: async () => {},
    };
  } else if (docker) {
    const { GenericContainer } = await import('testcontainers');
    const c = await new GenericContainer('postgres:15-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .start();
    server = {
      url: `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`,
      source: 'testcontainers postgres:15-alpine',
      stop: () => c.stop(),
    };
  } else {
    try {
      server = await startPostgresCluster();
    } catch (err) {
      throw new Error(`PostgreSQL is not available (${err.message})`, { cause: err });
    }
  }
  const { default: pg } = await import('pg');
  const database = `ddd_kit_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: server.url });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
  } catch (err) {
    await admin.end().catch(() => undefined);
    return { ...server, source: `${server.source}; no database of its own (${err.message})` };
  }
  await admin.end();
  const url = new URL(server.url);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    source: `${server.source}, database ${database} (dropped at the end)`,
    stop: async () => {
      const drop = new pg.Client({ connectionString: server.url });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
      await drop.end();
      await server.stop();
    },
  };
}

const PROVIDERS = {
  REDIS_URL: { name: 'redis', provide: provideRedis },
  REDIS_CLUSTER_NODES: { name: 'cluster', provide: provideRedisCluster },
  MONGODB_URI: { name: 'mongo', provide: provideMongo },
  DATABASE_URL: { name: 'postgres', provide: providePostgres },
  NATS_URL: { name: 'nats', provide: provideNats },
  RABBITMQ_URL: { name: 'rabbitmq', provide: provideRabbitMq },
};

/**
 * Provides every server, writes their addresses into process.env (children inherit them)
 * and returns { stop, report }. Failures are recorded, never thrown.
 */
export async function provideServers({ only } = {}) {
  const docker = await dockerAnswers();
  const stops = [];
  const report = [];
  await Promise.all(
    Object.entries(PROVIDERS)
      .filter(([env]) => !only || only.includes(env))
      .map(async ([env, { name, provide }]) => {
        const errorEnv = `DDD_KIT_${env}_ERROR`;
        try {
          const server = await provide(docker);
          process.env[env] = server.url;
          process.env[`DDD_KIT_${env}_SOURCE`] = server.source;
          delete process.env[errorEnv];
          stops.push(server.stop);
          report.push(`${name}: ${server.source} (${server.url})`);
        } catch (err) {
          process.env[errorEnv] = `${err.message}. How to provide it: ${HOW[name]}`;
          report.push(`${name}: UNAVAILABLE: ${err.message}`);
        }
      }),
  );
  return {
    report,
    stop: async () => {
      await Promise.allSettled(stops.map((s) => s()));
    },
  };
}
