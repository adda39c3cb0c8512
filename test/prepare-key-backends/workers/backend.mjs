// Opens a shared backend in a worker process, from the built library, the way an application
// instance would. The addresses come from the environment the test process passes down.
import { Cluster, Redis } from 'ioredis';
import mongoose from 'mongoose';
import { MongoPrepareKeyFactory, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';

export async function openBackend(backend, scope) {
  switch (backend) {
    case 'redis': {
      const redis = new Redis(process.env.REDIS_URL);
      return { factory: new RedisPrepareKeyFactory(redis, { keyPrefix: `${scope}:` }), close: () => redis.quit() };
    }
    case 'cluster': {
      const nodes = process.env.REDIS_CLUSTER_NODES.split(',').map((hp) => {
        const [host, port] = hp.trim().split(':');
        return { host, port: Number(port) };
      });
      const cluster = new Cluster(nodes);
      return { factory: new RedisPrepareKeyFactory(cluster, { keyPrefix: `${scope}:` }), close: () => cluster.quit() };
    }
    case 'mongo': {
      const connection = await mongoose.createConnection(process.env.MONGODB_URI, { dbName: scope }).asPromise();
      return { factory: new MongoPrepareKeyFactory(connection), close: () => connection.close() };
    }
    default:
      throw new Error(`unknown backend ${backend}`);
  }
}

/** The next IPC message of a given type from the test process. */
export function nextMessage(type) {
  return new Promise((resolve) => {
    const listener = (message) => {
      if (message?.type !== type) return;
      process.off('message', listener);
      resolve(message);
    };
    process.on('message', listener);
  });
}
