import { Cluster, Redis } from 'ioredis';
import mongoose from 'mongoose';
import {
  MongoPrepareKeyFactory,
  type PrepareKeyFactory,
  RedisPrepareKeyFactory,
  TTL_FOREVER,
} from '@ddd-kit/prepare-key';
import { canonicalJson } from '../../../libs/prepare-key/src/canonical-json.js';
import { mongoLabel, mongoUri, redisClusterNodes, redisUrl } from '../../support/servers.js';

/** The backends that several processes can share; workers/backend.mjs opens the same ones. */
export const SHARED_BACKENDS = ['redis', 'cluster', 'mongo'] as const;
export type SharedBackend = (typeof SHARED_BACKENDS)[number];

/** The server a backend ran on, for test names (the MongoDB wire may be the jongodb emulator). */
export function backendLabel(backend: SharedBackend): string {
  return { redis: 'Redis', cluster: 'Redis Cluster', mongo: mongoLabel() }[backend];
}

/** [label, backend] pairs for `describe.each(...)('… on %s', (_label, backend) => …)`. */
export const LABELLED_BACKENDS = SHARED_BACKENDS.map((backend) => [backendLabel(backend), backend] as const);

export interface OpenBackend {
  factory: PrepareKeyFactory;
  /** Writes many forever records of one name quickly (for reconciliation at scale). */
  seed: (name: string, entries: Array<[string, unknown]>) => Promise<void>;
  close: () => Promise<void>;
}

const SEED_CONCURRENCY = 256;

/** Seeds through the public API, many calls in flight. */
function seedByPrepare(factory: PrepareKeyFactory): OpenBackend['seed'] {
  return async (name, entries) => {
    const pk = factory.create(name);
    let next = 0;
    await Promise.all(
      Array.from({ length: SEED_CONCURRENCY }, async () => {
        while (next < entries.length) {
          const [key, value] = entries[next++];
          if (!(await pk.prepare(key, value))) throw new Error(`seeding: '${key}' was already held`);
        }
      }),
    );
  };
}

/** Opens a backend in this (the test) process; `scope` is the Redis key prefix or the MongoDB database. */
export async function openBackend(backend: SharedBackend, scope: string): Promise<OpenBackend> {
  switch (backend) {
    case 'redis': {
      const redis = new Redis(redisUrl());
      const factory = new RedisPrepareKeyFactory(redis, { keyPrefix: `${scope}:` });
      return { factory, seed: seedByPrepare(factory), close: async () => void (await redis.quit()) };
    }
    case 'cluster': {
      const cluster = new Cluster(redisClusterNodes());
      // Without the seal (a key in every one of 16,384 slots, checked by each fresh factory): tested
      // in unique-keys.data-loss.spec.ts.
      const factory = new RedisPrepareKeyFactory(cluster, { keyPrefix: `${scope}:`, seal: false });
      return { factory, seed: seedByPrepare(factory), close: async () => void (await cluster.quit()) };
    }
    case 'mongo': {
      const connection = await mongoose.createConnection(mongoUri(), { dbName: scope }).asPromise();
      const factory = new MongoPrepareKeyFactory(connection);
      // The emulator used in tests copies a collection on every single write, so thousands of
      // records are inserted in bulk, as the documents `prepare` writes (forever: no expireAt).
      const seed: OpenBackend['seed'] = async (name, entries) => {
        const documents = entries.map(([key, value]) => ({
          _id: key,
          value: canonicalJson(value),
          ttlAt: TTL_FOREVER,
        }));
        await connection.db!.collection<{ _id: string }>(`prepare_${name}`).insertMany(documents);
      };
      return { factory, seed, close: () => connection.close() };
    }
  }
}
