// How each PrepareKey backend's contract run meets the faults of the contract's fault matrix:
// a fault proxy in front of the real server, and a client set up as a caller meeting that fault
// would be (ioredis resending or not, a command timeout everywhere).
import type { PrepareKeyFault, PrepareKeyFaultTarget, ArmedFault } from '@ddd-kit/prepare-key/testing';
import { MongoPrepareKeyFactory, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';
import * as scripts from '../../../libs/prepare-key/src/backends/redis/redis-prepare-key.scripts.js';
import type { FaultHandle, FaultProxy, RequestInfo } from './fault-proxy.js';
import { CLIENT_TIMEOUT_MS, OPERATION_TIMEOUT_MS, RESENDING_CLIENT_TIMEOUT_MS, STALL_CUT_MS } from './fault-timing.js';
import { proxyRedisCluster, proxyUrl } from './index.js';
import { loadScripts } from './redis-scripts.js';

const timeoutFor = (fault: PrepareKeyFault) =>
  fault === 'lost-reply-resent' ? RESENDING_CLIENT_TIMEOUT_MS : CLIENT_TIMEOUT_MS;

function armOn(
  proxy: FaultProxy,
  fault: PrepareKeyFault,
  match: (r: RequestInfo) => boolean,
  nth: number,
  resend: 'client' | 'proxy',
): FaultHandle {
  switch (fault) {
    case 'lost-reply-resent':
      // ioredis resends by itself after the cut; other drivers do not, so the proxy delivers the
      // command twice and keeps only the second reply.
      return resend === 'client'
        ? proxy.dropReply({ match, nth, then: 'cut' })
        : proxy.duplicateRequest({ match, nth });
    case 'lost-reply':
      return proxy.dropReply({ match, nth, then: 'cut' });
    case 'timeout':
      // Held until the operation answered (the suite cancels the fault then): late, however slow the machine.
      return proxy.holdReply({ match, nth });
    case 'request-lost':
      return proxy.dropRequest({ match, nth, cutAfterMs: STALL_CUT_MS });
  }
}

function anyOf(handles: FaultHandle[]): ArmedFault {
  return { fired: Promise.any(handles.map((h) => h.fired)), cancel: () => handles.forEach((h) => h.cancel()) };
}

/**
 * A command on a record of PrepareKey `name`: a script (`EVALSHA sha 1 <prefix>:{<name>:<key>} …`)
 * or prepare's native `SET <prefix>:{<name>:<key>} <record> NX GET …`.
 */
const redisRecordCommand = (name: string) => (r: RequestInfo) => {
  const key = r.command === 'EVALSHA' || r.command === 'EVAL' ? r.args[3] : r.command === 'SET' ? r.args[1] : undefined;
  return (key ?? '').includes(`{${name}:`);
};

export async function redisFaultTarget(
  url: string,
  prefix: string,
  options: { seal?: boolean } = {},
): Promise<{ faults: PrepareKeyFaultTarget; close: () => Promise<void> }> {
  const { proxy } = await proxyUrl('redis', url);
  const faults: PrepareKeyFaultTarget = {
    open: async (fault) => {
      const redis = new Redis({
        host: proxy.host,
        port: proxy.port,
        commandTimeout: timeoutFor(fault),
        autoResendUnfulfilledCommands: fault !== 'lost-reply',
        retryStrategy: () => 10,
      });
      await loadScripts(redis, scripts);
      return {
        factory: new RedisPrepareKeyFactory(redis, {
          keyPrefix: `${prefix}:`,
          operationTimeoutMs: OPERATION_TIMEOUT_MS,
          ...options,
        }),
        close: async () => redis.disconnect(),
      };
    },
    arm: (fault, name, nth) => armOn(proxy, fault, redisRecordCommand(name), nth, 'client'),
  };
  return { faults, close: () => proxy.close() };
}

export async function redisClusterFaultTarget(
  nodes: Array<{ host: string; port: number }>,
  prefix: string,
  options: { seal?: boolean } = {},
): Promise<{ faults: PrepareKeyFaultTarget; close: () => Promise<void> }> {
  const proxied = await proxyRedisCluster(nodes);
  const faults: PrepareKeyFaultTarget = {
    open: async (fault) => {
      const cluster = proxied.connect({
        commandTimeout: timeoutFor(fault),
        autoResendUnfulfilledCommands: fault !== 'lost-reply',
      });
      await Promise.all(cluster.nodes('master').map((node) => loadScripts(node, scripts)));
      return {
        factory: new RedisPrepareKeyFactory(cluster, {
          keyPrefix: `${prefix}:`,
          operationTimeoutMs: OPERATION_TIMEOUT_MS,
          ...options,
        }),
        close: async () => cluster.disconnect(),
      };
    },
    // Every node's proxy is armed with one shared count: an operation's commands may go to
    // different nodes (its keys live in different slots).
    arm: (fault, name, nth) => {
      const isRecordCommand = redisRecordCommand(name);
      let seen = 0;
      const match = (r: RequestInfo) => isRecordCommand(r) && ++seen === nth;
      return anyOf(proxied.proxies.map((p) => armOn(p, fault, match, 1, 'client')));
    },
  };
  return { faults, close: proxied.close };
}

const MONGO_RECORD_COMMANDS = new Set(['update', 'delete', 'find', 'findAndModify', 'insert']);

export async function mongoFaultTarget(
  uri: string,
  dbName: string,
): Promise<{ faults: PrepareKeyFaultTarget; close: () => Promise<void> }> {
  const { proxy, url } = await proxyUrl('mongo', uri);
  const faults: PrepareKeyFaultTarget = {
    open: async () => {
      const connection = await mongoose
        .createConnection(url, {
          dbName,
          socketTimeoutMS: CLIENT_TIMEOUT_MS,
          retryWrites: false,
          retryReads: false,
          serverSelectionTimeoutMS: 2_000,
        })
        .asPromise();
      return { factory: new MongoPrepareKeyFactory(connection), close: () => connection.close(true) };
    },
    arm: (fault, name, nth) =>
      armOn(proxy, fault, (r) => MONGO_RECORD_COMMANDS.has(r.command) && r.args[1] === `prepare_${name}`, nth, 'proxy'),
  };
  return { faults, close: () => proxy.close() };
}

export async function postgresFaultTarget(
  url: string,
  table: string,
): Promise<{ faults: PrepareKeyFaultTarget; close: () => Promise<void> }> {
  const { default: pg } = await import('pg');
  const { PostgresPrepareKeyFactory } = await import('@ddd-kit/prepare-key');
  const { proxy, url: proxied } = await proxyUrl('postgres', url);
  const faults: PrepareKeyFaultTarget = {
    open: async () => {
      const pool = new pg.Pool({ connectionString: proxied, query_timeout: CLIENT_TIMEOUT_MS, max: 4 });
      pool.on('error', () => undefined); // a cut connection is the point of these tests
      const factory = new PostgresPrepareKeyFactory(pool, { table, sweepIntervalMs: 0 });
      // The schema check of the first use and a connection, before the case: under the client's
      // short timeout they are not what a case is about, and on a busy machine (cases run at once,
      // each with a fresh pool) they could time out before the armed statement is ever sent.
      await factory.ensureSchema();
      return { factory, close: () => pool.end() };
    },
    // Statements on the records (never the DDL of the first use).
    arm: (fault, _name, nth) =>
      armOn(proxy, fault, (r) => r.command.includes(table) && !/^CREATE/.test(r.command), nth, 'proxy'),
  };
  return { faults, close: () => proxy.close() };
}
