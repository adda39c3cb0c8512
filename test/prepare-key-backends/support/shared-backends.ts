import { Cluster, Redis } from 'ioredis';
import mongoose from 'mongoose';
import { MongoPrepareKeyFactory, type PrepareKeyFactory, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { mongoUri, redisClusterNodes, redisUrl } from '../../support/servers.js';

/** The backends that several processes can share; workers/backend.mjs opens the same ones. */
export const SHARED_BACKENDS = ['redis', 'cluster', 'mongo'] as const;
export type SharedBackend = (typeof SHARED_BACKENDS)[number];

export interface OpenBackend {
  factory: PrepareKeyFactory;
  close: () => Promise<void>;
}

/** Opens a backend in this (the test) process; `scope` is the Redis key prefix or the MongoDB database. */
export async function openBackend(backend: SharedBackend, scope: string): Promise<OpenBackend> {
  switch (backend) {
    case 'redis': {
      const redis = new Redis(redisUrl());
      return { factory: new RedisPrepareKeyFactory(redis, { prefix: scope }), close: async () => void (await redis.quit()) };
    }
    case 'cluster': {
      const cluster = new Cluster(redisClusterNodes());
      return { factory: new RedisPrepareKeyFactory(cluster, { prefix: scope }), close: async () => void (await cluster.quit()) };
    }
    case 'mongo': {
      const connection = await mongoose.createConnection(mongoUri(), { dbName: scope }).asPromise();
      return { factory: new MongoPrepareKeyFactory(connection), close: () => connection.close() };
    }
  }
}
