// The contract adapter for RedisMachineIdDistributor: a single Redis or a Redis Cluster, read
// directly, and reached through fault proxies (one per node; a Cluster through natMap).
import type { LuaScript } from '@ddd-kit/core/redis';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import type { DistributorContractTarget, FaultKind, Operation } from '@ddd-kit/id-generator/testing';
// The scripts' SHA-1s tell the fault proxy which request is which operation.
import {
  DISTRIBUTE_SCRIPT,
  GUARD_SCRIPT,
  REVERT_SCRIPT,
} from '../../../libs/id-generator/src/machine/redis/machine-id.scripts.js';
import {
  CLIENT_TIMEOUT_MS,
  OPERATION_TIMEOUT_MS,
  RESENDING_CLIENT_TIMEOUT_MS,
} from '../../support/fault-proxy/fault-timing.js';
import { proxyRedisCluster, proxyUrl, type FaultProxy } from '../../support/fault-proxy/index.js';
import { redisClusterNodes, redisUrl } from '../../support/servers.js';
import type { ProcessesTarget } from './machine-id-processes.case.js';

const SCRIPTS: Record<Operation, LuaScript> = {
  distribute: DISTRIBUTE_SCRIPT,
  guard: GUARD_SCRIPT,
  revert: REVERT_SCRIPT,
};

/** The request that runs an operation's script (EVALSHA by SHA-1, or EVAL of the source after NOSCRIPT). */
function runs(operation: Operation) {
  const { lua, sha } = SCRIPTS[operation];
  return (r: { command: string; args: readonly string[] }) =>
    (r.command === 'EVALSHA' && r.args[1] === sha) || (r.command === 'EVAL' && r.args[1] === lua);
}

/**
 * Client options per fault, as a caller meeting it would have them (ioredis resends by default).
 * `lost`: no resend, and no retry of a command whose connection was cut, so it fails at the cut.
 * `timeout`: the proxy holds the reply until the client has given up (no race with the timeout).
 */
function clientOptions(kind: FaultKind): RedisOptions {
  const base: RedisOptions = { retryStrategy: () => 20, commandTimeout: CLIENT_TIMEOUT_MS };
  if (kind === 'lost-then-resent') return { ...base, commandTimeout: RESENDING_CLIENT_TIMEOUT_MS };
  if (kind === 'lost') return { ...base, autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 };
  return base;
}

function arm(proxies: FaultProxy[], kind: FaultKind, operation: Operation): Promise<void> {
  const match = runs(operation);
  const handles = proxies.map((proxy) =>
    kind === 'timeout' ? proxy.holdReply({ match }) : proxy.dropReply({ match, then: 'cut' }),
  );
  // The namespace's keys live on one node: the first proxy to see the request applies the fault,
  // the others' are withdrawn (a held reply stays held until the client has moved on).
  return Promise.race(handles.map((h, i) => h.fired.then(() => i))).then((hit) =>
    handles.forEach((h, i) => i !== hit && h.cancel()),
  );
}

async function cleanup(redis: Redis | Cluster, namespace: string): Promise<void> {
  const d = new RedisMachineIdDistributor(redis);
  const keys = d.keys(namespace);
  await Promise.all(Object.values(keys).map((k) => redis.del(k)));
  // The op keys of distribute/revert calls (they expire after ten minutes anyway).
  const pattern = `${keys.meta.slice(0, -'meta'.length)}op:*`.replace(/[?*[\]\\]/g, (c, offset, all) =>
    offset === all.length - 1 ? c : `\\${c}`,
  );
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const key of found) await redis.del(key);
    } while (cursor !== '0');
  }
}

function views(
  redis: Redis | Cluster,
): Pick<DistributorContractTarget, 'owner' | 'heldBy' | 'released' | 'deadline' | 'floor' | 'cleanup'> {
  const keysOf = (namespace: string) => new RedisMachineIdDistributor(redis).keys(namespace);
  return {
    owner: (namespace, machineId) => redis.hget(keysOf(namespace).owners, String(machineId)),
    heldBy: async (namespace, instanceId) =>
      Object.entries(await redis.hgetall(keysOf(namespace).owners))
        .filter(([, owner]) => owner === instanceId)
        .map(([id]) => Number(id))
        .sort((a, b) => a - b),
    released: async (namespace) => (await redis.zrange(keysOf(namespace).released, 0, -1)).map(Number),
    deadline: async (namespace, machineId) => {
      const score = await redis.zscore(keysOf(namespace).deadlines, String(machineId));
      return score === null ? null : Number(score);
    },
    floor: async (namespace, machineId) =>
      Number((await redis.hget(keysOf(namespace).timestamps, String(machineId))) ?? 0),
    cleanup: (namespace) => cleanup(redis, namespace),
  };
}

export async function redisTarget(): Promise<ProcessesTarget> {
  const redis = new Redis(redisUrl());
  return {
    create: (options) => new RedisMachineIdDistributor(redis, options),
    faulty: async (kind) => {
      const { proxy, url } = await proxyUrl('redis', redisUrl());
      const client = new Redis(url, clientOptions(kind));
      client.on('error', () => undefined);
      return {
        create: (options) =>
          new RedisMachineIdDistributor(client, { operationTimeoutMs: OPERATION_TIMEOUT_MS, ...options }),
        inject: (operation) => arm([proxy], kind, operation),
        blackhole: () => proxy.blackhole(),
        heal: () => proxy.heal({ reset: true }),
        close: async () => {
          client.disconnect();
          await proxy.close();
        },
      };
    },
    ...views(redis),
    close: async () => redis.disconnect(),
    worker: { kind: 'redis', url: redisUrl() },
  };
}

export async function redisClusterTarget(): Promise<ProcessesTarget> {
  const cluster = new Cluster(redisClusterNodes());
  return {
    create: (options) => new RedisMachineIdDistributor(cluster, options),
    faulty: async (kind) => {
      const proxied = await proxyRedisCluster(redisClusterNodes());
      // connect keeps a cut node's connection, so a lost reply's resend goes back to its node.
      const client = proxied.connect(clientOptions(kind));
      client.on('error', () => undefined);
      return {
        create: (o) => new RedisMachineIdDistributor(client, { operationTimeoutMs: OPERATION_TIMEOUT_MS, ...o }),
        inject: (operation) => arm(proxied.proxies, kind, operation),
        blackhole: () => proxied.proxies.forEach((p) => p.blackhole()),
        heal: () => proxied.proxies.forEach((p) => p.heal({ reset: true })),
        close: async () => {
          client.disconnect();
          await proxied.close();
        },
      };
    },
    ...views(cluster),
    close: async () => cluster.disconnect(),
    worker: { kind: 'redis-cluster', nodes: redisClusterNodes() },
  };
}
