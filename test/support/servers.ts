// What a test asks for when it needs a real server. The addresses come from
// test/support/global-setup.js; when a server could not be provided the call throws with
// the reason and how to provide it, so the test fails and says why (nothing is skipped).
import { randomUUID } from 'node:crypto';

function required(env: string, what: string): string {
  const value = process.env[env];
  if (value) return value;
  const reason = process.env[`DDD_KIT_${env}_ERROR`] ?? `${env} is not set and the test setup did not start ${what}`;
  throw new Error(`${what} is required by this test but unavailable: ${reason}`);
}

export const redisUrl = (): string => required('REDIS_URL', 'Redis');
export const mongoUri = (): string => required('MONGODB_URI', 'MongoDB');
export const postgresUrl = (): string => required('DATABASE_URL', 'PostgreSQL');
/** A NATS server with JetStream enabled. */
export const natsUrl = (): string => required('NATS_URL', 'NATS with JetStream');
/** A RabbitMQ broker (AMQP 0-9-1). */
export const rabbitMqUrl = (): string => required('RABBITMQ_URL', 'RabbitMQ');

/**
 * What the MongoDB-wire server of this run is, for test names: the jongodb emulator the setup
 * starts when nothing else is given ("MongoDB-wire emulator (jongodb)"), or "MongoDB".
 */
export function mongoLabel(): string {
  return (process.env.DDD_KIT_MONGODB_URI_SOURCE ?? '').includes('jongodb')
    ? 'MongoDB-wire emulator (jongodb)'
    : 'MongoDB';
}

/** Cluster seed nodes as { host, port } pairs. */
export function redisClusterNodes(): Array<{ host: string; port: number }> {
  return required('REDIS_CLUSTER_NODES', 'Redis Cluster')
    .split(',')
    .map((hp) => {
      const [host, port] = hp.trim().split(':');
      return { host, port: Number(port) };
    });
}

/**
 * A prefix or database name no other suite (or earlier run) uses. Recorded, so that when the
 * test file is done everything named after it (Redis keys, MongoDB databases and collections,
 * PostgreSQL schemas) is removed (test/support/test-environment.js).
 */
export function uniqueName(suite: string): string {
  const name = `${suite.replace(/[^a-zA-Z0-9_]/g, '_')}_${randomUUID().slice(0, 8)}`;
  const names = ((globalThis as Record<string, unknown>).__DDD_KIT_TEST_NAMES__ ??= new Set<string>()) as Set<string>;
  names.add(name);
  return name;
}

/**
 * A schema of its own on the test database, for one suite: `url` connects with it as the
 * search path, `drop()` removes it and everything in it.
 */
export async function postgresSchema(
  suite: string,
): Promise<{ url: string; schema: string; drop: () => Promise<void> }> {
  const { default: pg } = await import('pg');
  const schema = uniqueName(suite).toLowerCase();
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresUrl());
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    schema,
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl() });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Drops every collection of a MongoDB database, as far as the server allows: the emulator the
 * tests run on has neither `dropDatabase` nor `listCollections`, so there this does nothing
 * (and the test servers are thrown away after the run).
 */
export async function dropMongoDatabase(db: {
  collections(): Promise<Array<{ drop(): Promise<unknown> }>>;
}): Promise<void> {
  let collections: Array<{ drop(): Promise<unknown> }>;
  try {
    collections = await db.collections();
  } catch {
    return;
  }
  for (const collection of collections) await collection.drop().catch(() => undefined);
}
