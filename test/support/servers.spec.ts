import { describe, expect, it } from '@jest/globals';
import { Redis, Cluster } from 'ioredis';
import mongoose from 'mongoose';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import amqp from 'amqplib';
import {
  mongoLabel,
  mongoUri,
  natsUrl,
  postgresSchema,
  postgresUrl,
  rabbitMqUrl,
  redisClusterNodes,
  redisUrl,
  uniqueName,
} from './servers.js';
import { startPostgresCluster, startRedisServer } from './server-provider.js';
import { waitFor } from './wait.js';

// The infrastructure every backend suite relies on: each server answers.
describe('test servers', () => {
  it('Redis answers PING', async () => {
    const redis = new Redis(redisUrl());
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it('Redis Cluster serves keys in every slot', async () => {
    const cluster = new Cluster(redisClusterNodes());
    try {
      const keys = Array.from({ length: 50 }, (_, i) => `${uniqueName('cluster')}:${i}`);
      await Promise.all(keys.map((k) => cluster.set(k, k)));
      expect(await Promise.all(keys.map((k) => cluster.get(k)))).toEqual(keys);
    } finally {
      cluster.disconnect();
    }
  });

  it(`${mongoLabel()} answers ping`, async () => {
    const conn = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('infra') }).asPromise();
    try {
      const res = await conn.db!.admin().command({ ping: 1 });
      expect(res.ok).toBe(1);
    } finally {
      await conn.close();
    }
  });

  it('PostgreSQL answers, in a database of this run, and a suite schema is its search path', async () => {
    const schema = await postgresSchema('infra');
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT current_database() AS db, current_schema() AS schema');
      expect(rows[0].schema).toBe(schema.schema);
      expect(rows[0].db).toBe(new URL(postgresUrl()).pathname.slice(1));
    } finally {
      await client.end();
      await schema.drop();
    }
  });

  it('NATS answers with JetStream enabled', async () => {
    const nc = await connect({ servers: natsUrl() });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.getAccountInfo();
      expect(info.limits).toBeDefined();
    } finally {
      await nc.close();
    }
  });

  it('RabbitMQ accepts a connection and declares a queue', async () => {
    const connection = await amqp.connect(rabbitMqUrl());
    try {
      const channel = await connection.createChannel();
      const queue = uniqueName('infra');
      expect((await channel.assertQueue(queue, { exclusive: true })).queue).toBe(queue);
    } finally {
      await connection.close();
    }
  });
});

// The stores a test owns, to restart, wipe or silence (never the run's shared ones).
describe('stores of a test of its own', () => {
  it('a redis-server: killed and started again it is empty; paused it answers nothing until resumed', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url, { commandTimeout: 500, retryStrategy: () => 20 });
    try {
      await redis.set('k', 'v');
      await server.restart();
      expect(await redis.get('k')).toBeNull();
      await redis.set('k', 'v2');
      server.pause();
      await expect(redis.get('k')).rejects.toThrow(/timed out/);
      server.resume();
      expect(await redis.get('k')).toBe('v2');
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });

  it('a PostgreSQL cluster: a fast restart ends its sessions (57P01) and keeps its data', async () => {
    const server = await startPostgresCluster();
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    const errors: string[] = [];
    pool.on('error', (error: Error & { code?: string }) => errors.push(error.code ?? error.message));
    try {
      await pool.query('CREATE TABLE t (v int); INSERT INTO t VALUES (1)');
      const idle = await pool.connect();
      idle.release();
      await server.restart({ mode: 'fast' });
      await waitFor('the idle connection to report 57P01', () => errors.includes('57P01'));
      const { rows } = await pool.query('SELECT v FROM t');
      expect(rows).toEqual([{ v: 1 }]);
    } finally {
      await pool.end();
      await server.stop();
    }
  });
});
