// How the IdempotencyStore contract meets its faults: a fault proxy in front of the real server,
// and a client set up as a caller meeting that fault would be (ioredis resending after a cut,
// a command timeout shorter than the late reply).
import type { ArmedIdempotencyFault, IdempotencyFault, IdempotencyFaultTarget } from '@ddd-kit/idempotency/testing';
import { RedisIdempotencyStore } from '@ddd-kit/idempotency';
import { Redis } from 'ioredis';
import * as scripts from '../../../libs/idempotency/src/stores/redis/redis-idempotency.scripts.js';
import type { FaultHandle, FaultProxy, RequestInfo } from './fault-proxy.js';
import { CLIENT_TIMEOUT_MS, OPERATION_TIMEOUT_MS, RESENDING_CLIENT_TIMEOUT_MS } from './fault-timing.js';
import { proxyRedisCluster, proxyUrl } from './index.js';
import { loadScripts } from './redis-scripts.js';

const timeoutFor = (fault: IdempotencyFault) => (fault === 'timeout' ? CLIENT_TIMEOUT_MS : RESENDING_CLIENT_TIMEOUT_MS);

function armOn(
  proxy: FaultProxy,
  fault: IdempotencyFault,
  match: (r: RequestInfo) => boolean,
  nth: number,
  resend: 'client' | 'proxy' = 'client',
): FaultHandle {
  switch (fault) {
    case 'lost-reply-resent':
      // ioredis resends by itself after the cut; pg does not, so the proxy delivers the
      // statement twice and keeps only the second reply.
      return resend === 'client'
        ? proxy.dropReply({ match, nth, then: 'cut' })
        : proxy.duplicateRequest({ match, nth });
    case 'timeout':
      // Held until the operation answered (the suite cancels the fault then): late, however slow the machine.
      return proxy.holdReply({ match, nth });
    case 'reset':
      return proxy.resetMidReply({ match, nth });
  }
}

/** A script run on a record under `prefix` (`EVALSHA sha 1 <prefix><key> …`). */
const recordCommand = (prefix: string) => (r: RequestInfo) =>
  (r.command === 'EVALSHA' || r.command === 'EVAL') && (r.args[3] ?? '').startsWith(prefix);

export async function redisIdempotencyFaults(
  url: string,
  prefix: string,
): Promise<{ faults: IdempotencyFaultTarget; close: () => Promise<void> }> {
  const { proxy } = await proxyUrl('redis', url);
  const faults: IdempotencyFaultTarget = {
    open: async (fault) => {
      const redis = new Redis({
        host: proxy.host,
        port: proxy.port,
        commandTimeout: timeoutFor(fault),
        retryStrategy: () => 10,
      });
      await loadScripts(redis, scripts);
      return {
        store: new RedisIdempotencyStore(redis, { keyPrefix: prefix, operationTimeoutMs: OPERATION_TIMEOUT_MS }),
        close: async () => redis.disconnect(),
      };
    },
    arm: (fault, nth) => armOn(proxy, fault, recordCommand(prefix), nth),
  };
  return { faults, close: () => proxy.close() };
}

export async function redisClusterIdempotencyFaults(
  nodes: Array<{ host: string; port: number }>,
  prefix: string,
): Promise<{ faults: IdempotencyFaultTarget; close: () => Promise<void> }> {
  const proxied = await proxyRedisCluster(nodes);
  const faults: IdempotencyFaultTarget = {
    open: async (fault) => {
      const cluster = proxied.connect({ commandTimeout: timeoutFor(fault) });
      await Promise.all(cluster.nodes('master').map((node) => loadScripts(node, scripts)));
      return {
        store: new RedisIdempotencyStore(cluster, { keyPrefix: prefix, operationTimeoutMs: OPERATION_TIMEOUT_MS }),
        close: async () => cluster.disconnect(),
      };
    },
    // One count shared by every node's proxy: a run's commands all go to the node of its key,
    // but which node that is depends on the key.
    arm: (fault, nth): ArmedIdempotencyFault => {
      const isRecord = recordCommand(prefix);
      let seen = 0;
      const match = (r: RequestInfo) => isRecord(r) && ++seen === nth;
      const handles = proxied.proxies.map((p) => armOn(p, fault, match, 1));
      return { fired: Promise.any(handles.map((h) => h.fired)), cancel: () => handles.forEach((h) => h.cancel()) };
    },
  };
  return { faults, close: proxied.close };
}

export async function postgresIdempotencyFaults(
  url: string,
  table: string,
): Promise<{ faults: IdempotencyFaultTarget; close: () => Promise<void> }> {
  const { default: pg } = await import('pg');
  const { PostgresIdempotencyStore } = await import('@ddd-kit/idempotency');
  const { proxy, url: proxied } = await proxyUrl('postgres', url);
  const faults: IdempotencyFaultTarget = {
    open: async (fault) => {
      const pool = new pg.Pool({ connectionString: proxied, query_timeout: timeoutFor(fault), max: 2 });
      pool.on('error', () => undefined); // a cut connection is the point of these tests
      const store = new PostgresIdempotencyStore(pool, { table, sweepIntervalMs: 0 });
      await store.ensureSchema();
      return { store, close: () => pool.end() };
    },
    // Statements on the records (the insert taking the key, then the completion), never DDL.
    arm: (fault, nth) =>
      armOn(proxy, fault, (r) => r.command.includes(table) && !/^\s*(CREATE|SELECT)/.test(r.command), nth, 'proxy'),
  };
  return { faults, close: () => proxy.close() };
}
