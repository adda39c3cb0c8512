import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import {
  dropMongoDatabase,
  mongoUri,
  postgresSchema,
  postgresUrl,
  redisClusterNodes,
  redisUrl,
  uniqueName,
} from '../servers.js';
import { sleep, waitFor } from '../wait.js';
import { FaultProxy, proxyRedisCluster, proxyUrl, type RequestInfo } from './index.js';

// The harness itself: each fault does to a real server and a real client what it says.

describe('fault proxy in front of Redis (ioredis)', () => {
  let proxy: FaultProxy;
  let client: Redis;
  let direct: Redis;

  beforeAll(async () => {
    const proxied = await proxyUrl('redis', redisUrl());
    proxy = proxied.proxy;
    direct = new Redis(redisUrl());
  });
  afterEach(() => {
    client?.disconnect();
    proxy.clear();
  });
  afterAll(async () => {
    await proxy.close();
    direct.disconnect();
  });

  function connect(options: RedisOptions = {}): Redis {
    client = new Redis({ host: proxy.host, port: proxy.port, retryStrategy: () => 20, ...options });
    return client;
  }

  it('passes traffic through untouched', async () => {
    const redis = connect();
    const key = uniqueName('fp');
    await redis.set(key, 'v');
    expect(await redis.get(key)).toBe('v');
    expect(proxy.injected).toBe(0);
  });

  it('dropReply then cut: the server acted, ioredis reconnects and resends the command', async () => {
    const redis = connect();
    await redis.ping();
    const key = uniqueName('fp');
    const fault = proxy.dropReply({ match: 'INCR' });
    // INCR is not idempotent: a resend shows as 2.
    expect(await redis.incr(key)).toBe(2);
    expect((await fault.fired).command).toBe('INCR');
    expect(await direct.get(key)).toBe('2');
  });

  it('dropReply then cut, with resending off: the caller gets an error (from commandTimeout) although the server acted', async () => {
    // Without commandTimeout, ioredis would leave this promise pending for ever: with
    // resending off it drops the unfulfilled command on reconnect without settling it.
    const redis = connect({ autoResendUnfulfilledCommands: false, commandTimeout: 300 });
    await redis.ping();
    const key = uniqueName('fp');
    proxy.dropReply({ match: 'INCR' });
    await expect(redis.incr(key)).rejects.toThrow();
    expect(await direct.get(key)).toBe('1');
  });

  it('dropReply then hold: the client times out while the server has acted', async () => {
    const redis = connect({ commandTimeout: 200 });
    await redis.ping();
    const key = uniqueName('fp');
    proxy.dropReply({ match: 'INCR', then: 'hold' });
    await expect(redis.incr(key)).rejects.toThrow(/timed out/);
    expect(await direct.get(key)).toBe('1');
  });

  it('duplicateRequest: the server runs the command twice and the client sees the second reply', async () => {
    const redis = connect();
    const key = uniqueName('fp');
    proxy.duplicateRequest({ match: 'INCR' });
    expect(await redis.incr(key)).toBe(2);
    expect(await direct.get(key)).toBe('2');
  });

  it('dropRequest: the server never sees the command; the client times out', async () => {
    const redis = connect({ commandTimeout: 200 });
    await redis.ping();
    const key = uniqueName('fp');
    proxy.dropRequest({ match: 'INCR', cutAfterMs: 300 });
    await expect(redis.incr(key)).rejects.toThrow(/timed out/);
    expect(await direct.get(key)).toBeNull();
  });

  it('delayReply keeps replies in order', async () => {
    const redis = connect();
    const key = uniqueName('fp');
    proxy.delayReply({ match: 'INCR', ms: 150 });
    const started = Date.now();
    const [a, b] = await Promise.all([redis.incr(key), redis.incr(key)]);
    expect([a, b]).toEqual([1, 2]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('holdReply: the client times out while the server has acted; its next command lets the late reply through', async () => {
    const redis = connect({ commandTimeout: 300 });
    await redis.ping();
    const key = uniqueName('fp');
    const held = proxy.holdReply({ match: 'INCR' });
    await expect(redis.incr(key)).rejects.toThrow(/timed out/);
    expect((await held.fired).command).toBe('INCR');
    await waitFor('the INCR to run on the server', async () => (await direct.get(key)) === '1');
    // The late INCR reply reaches the client first, matched to the command that timed out.
    expect(await redis.get(key)).toBe('1');
  });

  it('holdReply untilReleased: the reply and all behind it on the connection wait for release', async () => {
    const redis = connect();
    await redis.ping();
    const key = uniqueName('fp');
    const held = proxy.holdReply({ match: 'INCR', untilReleased: true });
    const settled: string[] = [];
    const incr = redis.incr(key).finally(() => settled.push('INCR'));
    expect((await held.fired).command).toBe('INCR');
    await waitFor('the held INCR to run on the server', async () => (await direct.get(key)) === '1');
    const get = redis.get(key).finally(() => settled.push('GET'));
    await direct.ping(); // a round trip: GET's reply, if the server sent it yet, waits at the proxy
    expect(settled).toEqual([]);
    held.release();
    expect(await Promise.all([incr, get])).toEqual([1, '1']);
    expect(settled).toEqual(['INCR', 'GET']);
  });

  it('resetMidReply: half a reply, then a reset; ioredis resends the read', async () => {
    const redis = connect();
    const key = uniqueName('fp');
    await direct.set(key, 'x'.repeat(10_000));
    const fault = proxy.resetMidReply({ match: 'GET' });
    expect(await redis.get(key)).toHaveLength(10_000);
    await fault.fired;
    expect(proxy.stats['reset-mid-reply']).toBe(1);
  });

  it('blackhole holds everything until heal, then it flows on', async () => {
    const redis = connect();
    await redis.ping();
    const key = uniqueName('fp');
    proxy.blackhole();
    const pending = redis.incr(key);
    await sleep(150);
    expect(await direct.get(key)).toBeNull();
    proxy.heal();
    expect(await pending).toBe(1);
  });

  it('random mode is reproducible from its seed', async () => {
    const run = async () => {
      const p = await FaultProxy.start({ protocol: 'redis', target: redisUrl() });
      p.random({ seed: 42, rate: 0.3, kinds: ['delay', 'duplicate'], maxDelayMs: 5, match: 'INCR' });
      const r = new Redis({ host: p.host, port: p.port });
      const key = uniqueName('fp');
      for (let i = 0; i < 40; i++) await r.incr(key);
      r.disconnect();
      await p.close();
      return { stats: { ...p.stats }, value: await direct.get(key) };
    };
    const first = await run();
    expect(first.stats.duplicate + first.stats.delay).toBeGreaterThan(0);
    expect(await run()).toEqual(first);
  });
});

describe('fault proxy in front of every node of a Redis Cluster (natMap)', () => {
  it('routes the cluster through the proxies and injects faults there', async () => {
    const proxied = await proxyRedisCluster(redisClusterNodes());
    const cluster = new Cluster(proxied.startupNodes, { natMap: proxied.natMap });
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `${uniqueName('fpc')}:${i}`);
      for (const p of proxied.proxies) p.duplicateRequest({ match: 'INCR' });
      const values = await Promise.all(keys.map((k) => cluster.incr(k)));
      // One INCR per node ran twice.
      expect(values.filter((v) => v === 2)).toHaveLength(proxied.proxies.length);
      expect(proxied.proxies.every((p) => p.stats.duplicate === 1)).toBe(true);
    } finally {
      cluster.disconnect();
      await proxied.close();
    }
  });

  it('connect: a command whose reply was lost is resent to its own node, once, and answered', async () => {
    const proxied = await proxyRedisCluster(redisClusterNodes());
    const cluster = proxied.connect({ commandTimeout: 3_000 });
    try {
      await cluster.set(uniqueName('fpc'), 'warm'); // the slots are known
      for (let trial = 0; trial < 5; trial++) {
        const key = uniqueName('fpc');
        const match = (r: RequestInfo) => r.command === 'SET' && r.args[1] === key;
        const handles = proxied.proxies.map((p) => p.dropReply({ match, nth: 1, then: 'cut' }));
        await expect(cluster.set(key, 'v')).resolves.toBe('OK');
        handles.forEach((h) => h.cancel());
      }
      // One fault per command: a resend that went to another node would have met that node's
      // armed fault too (and a redirection, which ioredis does not map through natMap).
      expect(proxied.proxies.reduce((n, p) => n + p.stats['drop-reply-cut'], 0)).toBe(5);
    } finally {
      cluster.disconnect();
      await proxied.close();
    }
  });
});

describe('fault proxy in front of the MongoDB-wire server (jongodb emulator)', () => {
  let proxy: FaultProxy;
  let client: MongoClient;
  let direct: MongoClient;
  const dbName = uniqueName('fp');

  beforeAll(async () => {
    const proxied = await proxyUrl('mongo', mongoUri());
    proxy = proxied.proxy;
    client = await new MongoClient(proxied.url, {
      socketTimeoutMS: 500,
      retryWrites: false,
      retryReads: false,
    }).connect();
    direct = await new MongoClient(mongoUri()).connect();
  });
  afterEach(() => proxy.clear());
  afterAll(async () => {
    await dropMongoDatabase(direct.db(dbName));
    await client.close();
    await direct.close();
    await proxy.close();
  });

  it('dropReply: the insert happened, the driver reports a network error', async () => {
    const fault = proxy.dropReply({ match: 'insert' });
    await expect(
      client
        .db(dbName)
        .collection('c')
        .insertOne({ _id: 'a' as never }),
    ).rejects.toThrow();
    expect((await fault.fired).command).toBe('insert');
    expect(
      await direct
        .db(dbName)
        .collection('c')
        .countDocuments({ _id: 'a' as never }),
    ).toBe(1);
  });

  it('duplicateRequest: the server runs the update twice, the client sees the second reply', async () => {
    await direct
      .db(dbName)
      .collection('n')
      .insertOne({ _id: 'x' as never, n: 0 });
    proxy.duplicateRequest({ match: 'update' });
    const result = await client
      .db(dbName)
      .collection('n')
      .updateOne({ _id: 'x' as never }, { $inc: { n: 1 } });
    expect(result.matchedCount).toBe(1);
    expect(
      (
        await direct
          .db(dbName)
          .collection('n')
          .findOne({ _id: 'x' as never })
      )?.n,
    ).toBe(2);
  });

  it('dropRequest: the server never sees the write', async () => {
    proxy.dropRequest({ match: 'insert', cutAfterMs: 1_000 });
    await expect(
      client
        .db(dbName)
        .collection('c')
        .insertOne({ _id: 'never' as never }),
    ).rejects.toThrow();
    expect(
      await direct
        .db(dbName)
        .collection('c')
        .countDocuments({ _id: 'never' as never }),
    ).toBe(0);
  });
});

describe('fault proxy in front of PostgreSQL (pg)', () => {
  let proxy: FaultProxy;
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let direct: pg.Client;

  beforeAll(async () => {
    schema = await postgresSchema('fp');
    proxy = (await proxyUrl('postgres', postgresUrl())).proxy;
    direct = new pg.Client({ connectionString: schema.url });
    await direct.connect();
    await direct.query('CREATE TABLE t (id text PRIMARY KEY, n int)');
  });
  afterEach(() => proxy.clear());
  afterAll(async () => {
    await direct.end();
    await proxy.close();
    await schema.drop();
  });

  async function connect(): Promise<pg.Client> {
    const url = new URL(schema.url);
    url.hostname = proxy.host;
    url.port = String(proxy.port);
    const client = new pg.Client({ connectionString: url.toString(), query_timeout: 400 });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  it('passes queries through, parameters included', async () => {
    const client = await connect();
    await client.query('INSERT INTO t VALUES ($1, $2)', ['pass', 1]);
    expect((await client.query('SELECT n FROM t WHERE id = $1', ['pass'])).rows).toEqual([{ n: 1 }]);
    await client.end();
  });

  it('dropReply: the insert committed, the client sees an error', async () => {
    const client = await connect();
    proxy.dropReply({ match: /INSERT/ });
    await expect(client.query('INSERT INTO t VALUES ($1, $2)', ['lost', 1])).rejects.toThrow();
    expect((await direct.query('SELECT n FROM t WHERE id = $1', ['lost'])).rowCount).toBe(1);
  });

  it('duplicateRequest: the statement runs twice', async () => {
    await direct.query('INSERT INTO t VALUES ($1, 0)', ['dup']);
    const client = await connect();
    proxy.duplicateRequest({ match: /UPDATE/ });
    const result = await client.query('UPDATE t SET n = n + 1 WHERE id = $1 RETURNING n', ['dup']);
    expect(result.rows).toEqual([{ n: 2 }]);
    await client.end();
  });

  it('dropRequest: the statement never runs; the client times out', async () => {
    const client = await connect();
    proxy.dropRequest({ match: /INSERT/, cutAfterMs: 1_000 });
    await expect(client.query('INSERT INTO t VALUES ($1, 1)', ['never'])).rejects.toThrow(/timeout/i);
    expect((await direct.query('SELECT 1 FROM t WHERE id = $1', ['never'])).rowCount).toBe(0);
  });
});

describe('fault proxy in front of an HTTP server (node:http)', () => {
  let server: http.Server;
  let proxy: FaultProxy;
  /** What the server did: every request it answered, in order. */
  const served: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        served.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`);
        if (req.url === '/chunked') {
          res.write('first,');
          res.end('second');
        } else if (req.url === '/empty') {
          res.writeHead(204).end();
        } else {
          res.setHeader('content-type', 'text/plain').end(`answer ${served.length}`);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    proxy = (await proxyUrl('http', `http://127.0.0.1:${port}`)).proxy;
  });
  afterEach(() => {
    served.length = 0;
    proxy.clear();
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => server.close(resolve));
  });

  /** One request through the proxy on a keep-alive agent, so that several share a connection. */
  function send(
    agent: http.Agent,
    method: string,
    path: string,
    body?: string,
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: proxy.host, port: proxy.port, method, path, agent }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('passes requests and replies through on one connection: lengths, chunks, HEAD and 204', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await send(agent, 'POST', '/a', 'body')).toEqual({ status: 200, text: 'answer 1' });
      expect(await send(agent, 'GET', '/chunked')).toEqual({ status: 200, text: 'first,second' });
      expect(await send(agent, 'HEAD', '/b')).toEqual({ status: 200, text: '' });
      expect(await send(agent, 'DELETE', '/empty')).toEqual({ status: 204, text: '' });
      expect(await send(agent, 'GET', '/c')).toEqual({ status: 200, text: 'answer 5' });
      expect(served).toEqual(['POST /a body', 'GET /chunked ', 'HEAD /b ', 'DELETE /empty ', 'GET /c ']);
      expect(proxy.openConnections).toBe(1);
      expect(proxy.injected).toBe(0);
    } finally {
      agent.destroy();
    }
  });

  it('dropReply: the server answered in full, the client sees its connection cut, the next request passes', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const fault = proxy.dropReply({ match: (r) => r.command === 'POST' && r.headers?.['x-try'] === '1' });
      await expect(send(agent, 'GET', '/before')).resolves.toMatchObject({ status: 200 });
      const lost = new Promise((resolve, reject) => {
        const req = http.request(
          { host: proxy.host, port: proxy.port, method: 'POST', path: '/users', agent, headers: { 'x-try': '1' } },
          () => reject(new Error('the dropped reply arrived')),
        );
        req.on('error', resolve);
        req.end('{"n":1}');
      });
      expect(String(await lost)).toMatch(/socket hang up|ECONNRESET/);
      expect(await fault.fired).toMatchObject({ command: 'POST', args: ['/users'] });
      expect(served).toEqual(['GET /before ', 'POST /users {"n":1}']);
      await expect(send(agent, 'POST', '/users', '{"n":1}')).resolves.toMatchObject({ status: 200 });
      expect(served).toHaveLength(3);
      expect(proxy.stats['drop-reply-cut']).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('duplicateRequest: the server answers twice, the client sees the second answer', async () => {
    // On a persistent connection: after `Connection: close` the server would not read the copy.
    const agent = new http.Agent({ keepAlive: true });
    try {
      proxy.duplicateRequest({ match: /^PUT \/x$/ });
      expect(await send(agent, 'PUT', '/x', 'once')).toEqual({ status: 200, text: 'answer 2' });
      expect(served).toEqual(['PUT /x once', 'PUT /x once']);
    } finally {
      agent.destroy();
    }
  });
});
