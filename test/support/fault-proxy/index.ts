import { Cluster, type RedisOptions } from 'ioredis';
import { FaultProxy, type Protocol } from './fault-proxy.js';

export { FaultProxy, mulberry32 } from './fault-proxy.js';
export type { FaultHandle, Matching, Protocol, RequestInfo } from './fault-proxy.js';

/** A proxy in front of the server of a URL (`redis://`, `mongodb://`, `postgres://`, `nats://`, `http://`), and the same URL through it. */
export async function proxyUrl(protocol: Protocol, url: string): Promise<{ proxy: FaultProxy; url: string }> {
  const parsed = new URL(url);
  const port = Number(parsed.port || { redis: 6379, mongo: 27017, postgres: 5432, nats: 4222, http: 80 }[protocol]);
  const proxy = await FaultProxy.start({ protocol, target: { host: parsed.hostname, port } });
  parsed.hostname = proxy.host;
  parsed.port = String(proxy.port);
  return { proxy, url: parsed.toString() };
}

/**
 * One proxy in front of every node of a Redis Cluster, and the ioredis `natMap` that sends
 * the client through them (the cluster announces its nodes' real addresses). `connect` makes a
 * client that meets a fault as a caller would: `redisOptions` apply to each node's connection.
 */
export async function proxyRedisCluster(nodes: Array<{ host: string; port: number }>): Promise<{
  proxies: FaultProxy[];
  startupNodes: Array<{ host: string; port: number }>;
  natMap: Record<string, { host: string; port: number }>;
  connect: (redisOptions: RedisOptions) => Cluster;
  close: () => Promise<void>;
}> {
  const proxies = await Promise.all(nodes.map((target) => FaultProxy.start({ protocol: 'redis', target })));
  const natMap: Record<string, { host: string; port: number }> = {};
  nodes.forEach((node, i) => {
    natMap[`${node.host}:${node.port}`] = { host: proxies[i].host, port: proxies[i].port };
  });
  const startupNodes = proxies.map((p) => ({ host: p.host, port: p.port }));
  return {
    proxies,
    startupNodes,
    natMap,
    connect: (redisOptions) =>
      new Cluster(startupNodes, {
        natMap,
        // A node whose connection is cut reconnects and keeps its place (by default ioredis ends
        // it): its unanswered command is resent to it, not retried on another node, whose MOVED
        // answer the client would follow to the node's own address (ioredis does not map a
        // redirection through natMap), ending in "Too many Cluster redirections".
        clusterNodeRetryStrategy: () => 10,
        redisOptions,
        clusterRetryStrategy: () => 10,
      }),
    close: async () => {
      await Promise.all(proxies.map((p) => p.close()));
    },
  };
}
