import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import { PostgresPrepareKeyFactory, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { getRepositoryToken, type AbstractRepository } from '@ddd-kit/repository';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { FaultProxy } from '../../../../test/support/fault-proxy/index.js';
import { freePort } from '../../../../test/support/server-provider.js';
import {
  dropMongoDatabase,
  mongoLabel,
  mongoUri,
  postgresSchema,
  redisUrl,
  uniqueName,
} from '../../../../test/support/servers.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { UserReadModel } from '../../src/read-model/user-read-model.js';
import { User } from '../../src/users/user.aggregate.js';
import { UsernamePrepareKey } from '../../src/users/username.prepare-key.js';
import { AppProcess } from './app-process.js';
import { createTestApp, memoryBackend } from './test-app.js';

/** What the stores hold: every user, and every unexpired username reservation. */
export interface StoredState {
  users: Array<{ id: string; username: string }>;
  reservations: Array<{ name: string; userId: string }>;
}

/** A running deployment of the sample: its instances' URLs, and how to act on them. */
export interface Running {
  urls: string[];
  /** One proxy per store connection of each instance (none in memory). */
  proxies: FaultProxy[];
  /** The app itself, when it runs in this process (to spy on its providers). */
  app?: INestApplication;
  /** SIGKILL instance i (processes only). */
  kill(i: number): Promise<void>;
  /** Starts instance i again on its URL (processes only). */
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}

/** A user as the write model holds it, or as the read model shows it. */
export interface UserVersion {
  id: string;
  username: string;
  version: number;
}

/** One deployment of the sample: its stores, how to start it, reconcile it and read its state. */
export interface Deployment {
  label: string;
  /** Whether `kill`/`restart` work (separate processes). */
  processes: boolean;
  start(options: { instances: number; proxied: boolean }): Promise<Running>;
  /** One pass of `npm run reconcile` (every reservation judged: no grace). */
  reconcile(): Promise<unknown>;
  inspect(): Promise<StoredState>;
  /** The users of the write model and of the read model (`GET /users?username=`'s source), each in id order. */
  models(): Promise<{ users: UserVersion[]; views: UserVersion[] }>;
  close(): Promise<void>;
}

const byId = (a: UserVersion, b: UserVersion) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const RECONCILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'reconcile.js');

interface Server {
  env: string;
  protocol: 'redis' | 'mongo' | 'postgres';
  url: string;
}

/** App processes sharing stores; each instance reaches each store through a proxy of its own when asked. */
function processDeployment(spec: {
  label: string;
  servers: Server[];
  env: Record<string, string>;
  inspect: () => Promise<StoredState>;
  models: Deployment['models'];
  cleanup: () => Promise<void>;
}): Deployment {
  return {
    label: spec.label,
    processes: true,
    async start({ instances, proxied }) {
      const proxies: FaultProxy[] = [];
      const envs: Array<Record<string, string>> = [];
      const urls: string[] = [];
      for (let i = 0; i < instances; i++) {
        const env: Record<string, string> = { ...spec.env };
        for (const server of spec.servers) {
          if (!proxied) {
            env[server.env] = server.url;
            continue;
          }
          const url = new URL(server.url);
          const proxy = await FaultProxy.start({
            protocol: server.protocol,
            target: { host: url.hostname, port: Number(url.port) },
          });
          proxies.push(proxy);
          url.hostname = proxy.host;
          url.port = String(proxy.port);
          env[server.env] = url.toString();
        }
        const port = await freePort();
        env.PORT = String(port);
        envs.push(env);
        urls.push(`http://127.0.0.1:${port}`);
      }
      const apps = envs.map((env) => new AppProcess(env));
      const started = async (i: number) => apps[i].waitForHealth(urls[i]);
      await Promise.all(apps.map((_, i) => started(i)));
      return {
        urls,
        proxies,
        kill: async (i) => {
          await apps[i].kill();
        },
        restart: async (i) => {
          apps[i] = new AppProcess(envs[i]);
          await started(i);
        },
        stop: async () => {
          await Promise.all(apps.map((app) => app.stop()));
          await Promise.all(proxies.map((p) => p.close()));
        },
      };
    },
    reconcile: () => runReconcile({ ...spec.env, ...Object.fromEntries(spec.servers.map((s) => [s.env, s.url])) }),
    inspect: spec.inspect,
    models: spec.models,
    close: spec.cleanup,
  };
}

export function redisAndMongo(): Deployment {
  const name = uniqueName('deploy');
  const prefix = `${name}:prepare`;
  const mongodbUri = `${mongoUri().replace(/\/+$/, '')}/${name}`;
  return processDeployment({
    label: `Redis + ${mongoLabel()}`,
    servers: [
      { env: 'REDIS_URL', protocol: 'redis', url: redisUrl() },
      { env: 'MONGODB_URI', protocol: 'mongo', url: mongodbUri },
    ],
    env: { PREPARE_BACKEND: 'redis', REPOSITORY_BACKEND: 'mongo', MACHINE_ID: 'redis', PREPARE_KEY_PREFIX: prefix },
    inspect: async () => {
      const mongo = await new MongoClient(mongodbUri).connect();
      const redis = new Redis(redisUrl());
      try {
        // A removed user whose events the relay has not delivered yet stays as a tombstone (`_deleted`): not a user.
        const users = (
          await mongo
            .db()
            .collection('user')
            .find({ _deleted: { $ne: true } })
            .toArray()
        ).map((d) => ({ id: String(d._id), username: String(d.username) }));
        const reservations = await reservationsOf(
          new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` }).create('username'),
        );
        return { users, reservations };
      } finally {
        await mongo.close();
        redis.disconnect();
      }
    },
    models: async () => {
      const mongo = await new MongoClient(mongodbUri).connect();
      try {
        const of = (d: Record<string, unknown>) => ({
          id: String(d._id),
          username: String(d.username),
          version: Number(d.version),
        });
        const users = (
          await mongo
            .db()
            .collection('user')
            .find({ _deleted: { $ne: true } })
            .toArray()
        ).map(of);
        const views = (
          await mongo
            .db()
            .collection('user_views')
            .find({ deleted: { $ne: true } })
            .toArray()
        ).map(of);
        return { users: users.sort(byId), views: views.sort(byId) };
      } finally {
        await mongo.close();
      }
    },
    cleanup: async () => {
      const mongo = await new MongoClient(mongodbUri).connect();
      await dropMongoDatabase(mongo.db());
      await mongo.close();
    },
  });
}

export async function postgresOnly(): Promise<Deployment> {
  const schema = await postgresSchema('deploy');
  return processDeployment({
    label: 'PostgreSQL',
    servers: [{ env: 'DATABASE_URL', protocol: 'postgres', url: schema.url }],
    env: { PREPARE_BACKEND: 'postgres', REPOSITORY_BACKEND: 'postgres', MACHINE_ID: 'postgres' },
    inspect: async () => {
      const pool = new pg.Pool({ connectionString: schema.url });
      try {
        const users = (await pool.query('SELECT id, username FROM users')).rows.map((r) => ({
          id: String(r.id),
          username: String(r.username),
        }));
        const reservations = await reservationsOf(
          new PostgresPrepareKeyFactory(pool, { table: 'username_reservations', sweepIntervalMs: 0 }).create(
            'username',
          ),
        );
        return { users, reservations };
      } finally {
        await pool.end();
      }
    },
    models: async () => {
      const pool = new pg.Pool({ connectionString: schema.url });
      try {
        const of = (r: Record<string, unknown>) => ({
          id: String(r.id),
          username: String(r.username),
          version: Number(r.version),
        });
        const users = (await pool.query('SELECT id, username, version FROM users ORDER BY id')).rows.map(of);
        const views = (
          await pool.query('SELECT id, username, version FROM user_views WHERE NOT deleted ORDER BY id')
        ).rows.map(of);
        return { users: users.sort(byId), views: views.sort(byId) };
      } finally {
        await pool.end();
      }
    },
    cleanup: () => schema.drop(),
  });
}

/** Everything in memory: one instance in this process (memory cannot be shared by processes). */
export function memoryOnly(): Deployment {
  return inProcess('memory', async () => ({ config: memoryBackend.config(), cleanup: async () => {} }));
}

/** PostgreSQL alone, one instance in this process (on a schema of its own): no build needed, and the test can watch its log. */
export function postgresInProcess(): Deployment {
  return inProcess('PostgreSQL', async () => {
    const schema = await postgresSchema('deploy');
    return {
      config: {
        prepareBackend: 'postgres',
        repositoryBackend: 'postgres',
        machineId: 'postgres',
        databaseUrl: schema.url,
        port: 0,
      },
      cleanup: () => schema.drop(),
    };
  });
}

/** The names on Redis, the users (and machine IDs) on PostgreSQL, one instance in this process. */
export function redisAndPostgresInProcess(): Deployment {
  return inProcess('Redis + PostgreSQL', async () => {
    const schema = await postgresSchema('deploy');
    return {
      config: {
        prepareBackend: 'redis',
        repositoryBackend: 'postgres',
        machineId: 'postgres',
        redisUrl: redisUrl(),
        databaseUrl: schema.url,
        prepareKeyPrefix: `${uniqueName('deploy')}:prepare`,
        port: 0,
      },
      cleanup: () => schema.drop(),
    };
  });
}

/** One instance of the app in this process, on the stores `open` provides (and `cleanup` removes). */
function inProcess(
  label: string,
  open: () => Promise<{ config: AppConfig; cleanup: () => Promise<void> }>,
): Deployment {
  let app: INestApplication | undefined;
  let cleanup = async () => {};
  return {
    label,
    processes: false,
    async start() {
      const opened = await open();
      cleanup = opened.cleanup;
      app = await createTestApp({ ...opened.config, reconcileGraceMs: 0 });
      const port = await freePort();
      await app.listen(port, '127.0.0.1');
      const refuse = () => Promise.reject(new Error('an in-process deployment cannot be killed'));
      return {
        urls: [`http://127.0.0.1:${port}`],
        proxies: [],
        app,
        kill: refuse,
        restart: refuse,
        stop: async () => {},
      };
    },
    reconcile: async () => {
      const { RegistrationReconciler } = await import('../../src/reconciliation/registration-reconciler.js');
      return app!.get(RegistrationReconciler).run();
    },
    inspect: async () => {
      const repository = app!.get<AbstractRepository<string, User>>(getRepositoryToken(User));
      const users: StoredState['users'] = [];
      for await (const user of repository.aggregates()) users.push({ id: user.id, username: user.username });
      return { users, reservations: await reservationsOf(app!.get(UsernamePrepareKey)) };
    },
    models: async () => {
      const repository = app!.get<AbstractRepository<string, User>>(getRepositoryToken(User));
      const users: UserVersion[] = [];
      for await (const user of repository.aggregates())
        users.push({ id: user.id, username: user.username, version: user.oldVersion });
      // Every entry of the read model, with the name it is found by when it is a user's.
      const readModel = app!.get(UserReadModel);
      const views: UserVersion[] = [];
      let cursor: string | null = null;
      do {
        const page = await readModel.listVersions({ cursor, limit: 100 });
        for (const { id } of page.entries) {
          const user = users.find((u) => u.id === id);
          const found =
            user === undefined ? [] : (await readModel.findByUsername(user.username)).filter((v) => v.id === id);
          views.push(
            found[0] ?? {
              id,
              username: '(not found by its name)',
              version: page.entries.find((e) => e.id === id)!.version,
            },
          );
        }
        cursor = page.cursor;
      } while (cursor !== null);
      return { users: users.sort(byId), views: views.sort(byId) };
    },
    close: async () => {
      await app?.close();
      await cleanup();
    },
  };
}

async function reservationsOf(keys: {
  records(): AsyncIterable<{ key: string; value: { value: unknown; isExpired(): boolean } }>;
}) {
  const reservations: StoredState['reservations'] = [];
  for await (const record of keys.records()) {
    if (!record.value.isExpired())
      reservations.push({ name: record.key, userId: String((record.value.value as { id: unknown }).id) });
  }
  return reservations;
}

/** The three invariants of SPEC §4, in words for each breach. */
export function breaches({ users, reservations }: StoredState): string[] {
  const found: string[] = [];
  const byName = new Map<string, string[]>();
  for (const user of users) byName.set(user.username, [...(byName.get(user.username) ?? []), user.id]);
  for (const [name, ids] of byName) if (ids.length > 1) found.push(`users ${ids.join(', ')} share the name '${name}'`);
  const reservedBy = new Map(reservations.map((r) => [r.name, r.userId]));
  for (const user of users) {
    const holder = reservedBy.get(user.username);
    if (holder !== user.id)
      found.push(`user ${user.id}'s name '${user.username}' is reserved by ${holder ?? 'nobody'}`);
  }
  const userById = new Map(users.map((u) => [u.id, u]));
  for (const { name, userId } of reservations) {
    const owner = userById.get(userId);
    if (owner?.username !== name)
      found.push(
        `'${name}' is reserved by ${userId}, which ${owner ? `is named '${owner.username}'` : 'does not exist'}`,
      );
  }
  return found;
}

/** One pass of the built `npm run reconcile` against the stores directly, every reservation judged (no grace). */
function runReconcile(env: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RECONCILE], {
      env: { ...process.env, ...env, RECONCILE_GRACE_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`reconcile exited with ${code}:\n${out}`));
      try {
        resolve(JSON.parse(out.slice(out.indexOf('{'))));
      } catch {
        resolve(out);
      }
    });
  });
}
