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

/** Cluster seed nodes as { host, port } pairs. */
export function redisClusterNodes(): Array<{ host: string; port: number }> {
  return required('REDIS_CLUSTER_NODES', 'Redis Cluster')
    .split(',')
    .map((hp) => {
      const [host, port] = hp.trim().split(':');
      return { host, port: Number(port) };
    });
}

/** A prefix or database name no other suite (or earlier run) uses. */
export function uniqueName(suite: string): string {
  return `${suite.replace(/[^a-zA-Z0-9_]/g, '_')}_${randomUUID().slice(0, 8)}`;
}
