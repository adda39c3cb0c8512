// Removes what a test file created on the test servers under the names it got from
// `uniqueName()` (test/support/servers.ts): Redis keys (single node and every Cluster master),
// MongoDB databases and collections, PostgreSQL schemas, JetStream streams whose names contain one of them.
// Run by the test environment (test/support/test-environment.js) once the file's tests, hooks
// and worker processes are done, so nothing it created outlives the run on a shared server.
// Plain ESM JavaScript: the environment loads it outside Jest's module system.
import { Cluster, Redis } from 'ioredis';

/** Matches the random part of a unique name: `<suite>_<8 hex digits>`. */
const UNIQUE = /_([0-9a-f]{8})/g;

/** A predicate: does `text` contain one of `names`? (Lower-cased too: PostgreSQL folds schema names.) */
function containsOneOf(names) {
  const byId = new Map();
  for (const name of names) {
    const id = name.slice(-8);
    byId.set(id, [...(byId.get(id) ?? []), name, name.toLowerCase()]);
  }
  return (text) => {
    for (const match of text.matchAll(UNIQUE)) {
      if ((byId.get(match[1]) ?? []).some((name) => text.includes(name))) return true;
    }
    return false;
  };
}

/** Deletes every key containing one of the names on one Redis node; resolves to how many. */
async function cleanRedisNode(node, matches) {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await node.scan(cursor, 'COUNT', 1000);
    const mine = keys.filter(matches);
    if (mine.length > 0) {
      // One UNLINK per key: on a Cluster node a multi-key UNLINK across slots is refused.
      const pipeline = node.pipeline();
      for (const key of mine) pipeline.unlink(key);
      await pipeline.exec();
      deleted += mine.length;
    }
    cursor = next;
  } while (cursor !== '0');
  return deleted;
}

async function cleanRedis(matches) {
  let deleted = 0;
  if (process.env.REDIS_URL) {
    const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      await redis.connect();
      deleted += await cleanRedisNode(redis, matches);
    } finally {
      redis.disconnect();
    }
  }
  if (process.env.REDIS_CLUSTER_NODES) {
    const nodes = process.env.REDIS_CLUSTER_NODES.split(',').map((hp) => {
      const [host, port] = hp.trim().split(':');
      return { host, port: Number(port) };
    });
    const cluster = new Cluster(nodes, { lazyConnect: true, clusterRetryStrategy: () => null });
    try {
      await cluster.connect();
      for (const master of cluster.nodes('master')) deleted += await cleanRedisNode(master, matches);
    } finally {
      cluster.disconnect();
    }
  }
  return deleted;
}

/**
 * Drops the databases, and the collections in other databases, whose names contain one of the
 * names. The MongoDB-wire emulator the test setup starts (jongodb) has neither listDatabases
 * nor drop: there nothing is listed, and the emulator's data goes with its process at the end
 * of the run.
 */
async function cleanMongo(matches) {
  if (!process.env.MONGODB_URI) return 0;
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(process.env.MONGODB_URI, { serverSelectionTimeoutMS: 2000 });
  let dropped = 0;
  try {
    await client.connect();
    let databases;
    try {
      ({ databases } = await client.db('admin').admin().listDatabases({ nameOnly: true }));
    } catch {
      return 0; // no listDatabases: the emulator
    }
    for (const { name } of databases) {
      if (['admin', 'local', 'config'].includes(name)) continue;
      if (matches(name)) {
        await client.db(name).dropDatabase();
        dropped++;
        continue;
      }
      for (const { name: collection } of await client.db(name).listCollections({}, { nameOnly: true }).toArray()) {
        if (matches(collection)) {
          await client.db(name).collection(collection).drop();
          dropped++;
        }
      }
    }
  } finally {
    await client.close();
  }
  return dropped;
}

/** Drops the schemas (of this run's database) whose names contain one of the names. */
async function cleanPostgres(matches) {
  if (!process.env.DATABASE_URL) return 0;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 2000 });
  let dropped = 0;
  try {
    await client.connect();
    const { rows } = await client.query('SELECT nspname FROM pg_namespace');
    for (const { nspname } of rows) {
      if (!matches(nspname)) continue;
      await client.query(`DROP SCHEMA IF EXISTS "${nspname.replaceAll('"', '""')}" CASCADE`);
      dropped++;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return dropped;
}

/** Deletes the JetStream streams whose names contain one of the names. */
async function cleanNats(matches) {
  if (!process.env.NATS_URL) return 0;
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: process.env.NATS_URL, timeout: 2000, reconnect: false });
  let deleted = 0;
  try {
    const jsm = await jetstreamManager(nc);
    for await (const name of jsm.streams.names()) {
      if (matches(name)) {
        await jsm.streams.delete(name);
        deleted++;
      }
    }
  } finally {
    await nc.close();
  }
  return deleted;
}

/**
 * Removes everything on the test servers named after `names`. A server that cannot be reached
 * is skipped (its tests have failed, saying why); resolves to what was removed, per server.
 */
export async function cleanUpNames(names) {
  const removed = { redisKeys: 0, mongo: 0, postgresSchemas: 0, natsStreams: 0, errors: [] };
  if (names.length === 0) return removed;
  const matches = containsOneOf(names);
  const attempt = async (field, clean) => {
    try {
      removed[field] = await clean(matches);
    } catch (error) {
      removed.errors.push(`${field}: ${error.message}`);
    }
  };
  await Promise.all([
    attempt('redisKeys', cleanRedis),
    attempt('mongo', cleanMongo),
    attempt('postgresSchemas', cleanPostgres),
    attempt('natsStreams', cleanNats),
  ]);
  return removed;
}
