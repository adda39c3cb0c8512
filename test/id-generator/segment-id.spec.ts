import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { PostgresSegmentSource, RedisSegmentSource, SegmentExhaustedError, SegmentId } from '@ddd-kit/id-generator';
import { IdGeneratorOptionsError } from '../../libs/id-generator/src/errors.js';
import type { SegmentIdOptions } from '../../libs/id-generator/src/generators/segment-id.js';
import { CLIENT_TIMEOUT_MS, OPERATION_TIMEOUT_MS } from '../support/fault-proxy/fault-timing.js';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { postgresSchema, redisClusterNodes, redisUrl, uniqueName } from '../support/servers.js';

/** One store of segment marks, as the cases below need it. */
interface Backend {
  /** Options naming this store's source. */
  source(): Pick<SegmentIdOptions, 'redis' | 'source'>;
  /** The options in their short form (`redis`: the library builds the source), where there is one. */
  shorthand?(): Pick<SegmentIdOptions, 'redis'>;
  /** Sets the mark of a key, as if earlier blocks had been handed out. */
  setMark(key: string, value: number): Promise<void>;
  cleanup(keys: string[]): Promise<void>;
  close(): Promise<void>;
}

function redisBackend(connect: () => Redis | Cluster): () => Promise<Backend> {
  return async () => {
    const redis = connect();
    return {
      // The deadline the fault cases use: a loaded machine may hold a reply past the default 2 s,
      // and this file is about the numbers, not the deadline (test/core/silent-redis.spec.ts is).
      source: () => ({ source: new RedisSegmentSource(redis, { operationTimeoutMs: OPERATION_TIMEOUT_MS }) }),
      shorthand: () => ({ redis }),
      setMark: async (key, value) => void (await redis.set(key, String(value))),
      cleanup: async (keys) => void (await Promise.all(keys.map((k) => redis.del(k)))),
      close: async () => redis.disconnect(),
    };
  };
}

async function postgresBackend(): Promise<Backend> {
  const schema = await postgresSchema('segment');
  const pool = new pg.Pool({ connectionString: schema.url, max: 4 });
  const source = new PostgresSegmentSource(pool, { schema: schema.schema });
  return {
    source: () => ({ source }),
    setMark: async (key, value) => {
      await source.reserve(key, 1); // creates the table and the row
      await pool.query(`UPDATE ${source.table} SET max = $2 WHERE name = $1`, [key, value]);
    },
    cleanup: async () => undefined, // the schema goes
    close: async () => {
      await pool.end();
      await schema.drop();
    },
  };
}

describe.each([
  ['Redis', redisBackend(() => new Redis(redisUrl()))],
  ['Redis Cluster', redisBackend(() => new Cluster(redisClusterNodes()))],
  ['PostgreSQL', postgresBackend],
] as Array<[string, () => Promise<Backend>]>)('SegmentId on %s', (_label, connect) => {
  let backend: Backend;
  const keys: string[] = [];

  beforeAll(async () => {
    backend = await connect();
  });

  afterAll(async () => {
    await backend.cleanup(keys);
    await backend.close();
  });

  function key(): string {
    const k = uniqueName('segment');
    keys.push(k);
    return k;
  }

  it('numbers from many generators on one key never collide, and each generator counts up', async () => {
    const k = key();
    const generators = Array.from(
      { length: 6 },
      () => new SegmentId({ ...backend.source(), key: k, segmentSize: 97, prefetchSegments: 2 }),
    );
    const all: number[] = [];
    await Promise.all(
      generators.map(async (g) => {
        let previous = 0;
        for (let i = 0; i < 2_000; i++) {
          const text = await g.generateAsync();
          const n = Number(text);
          expect(String(n)).toBe(text);
          if (!(n > previous)) throw new Error(`${n} after ${previous}`);
          previous = n;
          all.push(n);
        }
      }),
    );
    expect(new Set(all).size).toBe(all.length);
    generators.forEach((g) => g.close());
  });

  it('a warm generator serves synchronously from prefetched segments, then throws SegmentExhaustedError rather than block', async () => {
    const g = await new SegmentId({ ...backend.source(), key: key(), segmentSize: 10, prefetchSegments: 2 }).ready();
    const got: string[] = [];
    let error: unknown;
    try {
      for (let i = 0; i < 100; i++) got.push(g.generate());
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SegmentExhaustedError);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => String(i + 1)));
    expect(got.length).toBeGreaterThanOrEqual(10);
    expect(got.length % 10).toBe(0); // whole segments were served
    expect(await g.generateAsync()).toBe(String(got.length + 1)); // the next segment, once it arrived
    g.close();
  });

  it('crosses the 10,000 boundaries of its string building correctly', async () => {
    const k = key();
    await backend.setMark(k, 9990);
    const g = await new SegmentId({ ...backend.source(), key: k, segmentSize: 30, prefetchSegments: 1 }).ready();
    const texts = Array.from({ length: 30 }, () => g.generate());
    expect(texts).toEqual(Array.from({ length: 30 }, (_, i) => String(9991 + i)));
    g.close();
  });

  it('rejects bad options and a closed generator', async () => {
    expect(() => new SegmentId({ ...backend.source(), key: '' })).toThrow(IdGeneratorOptionsError);
    expect(() => new SegmentId({ ...backend.source(), key: 'k', segmentSize: 0 })).toThrow(IdGeneratorOptionsError);
    expect(() => new SegmentId({ redis: undefined as never, key: 'k' })).toThrow(IdGeneratorOptionsError);
    expect(() => new SegmentId({ redis: {} as never, source: new RedisSegmentSource({} as never), key: 'k' })).toThrow(
      /one source/,
    );
    const g = new SegmentId({ ...(backend.shorthand?.() ?? backend.source()), key: key() });
    g.close();
    await expect(g.generateAsync()).rejects.toThrow(/closed/);
  });
});

describe('PostgresSegmentSource', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    schema = await postgresSchema('segment_pg');
    pool = new pg.Pool({ connectionString: schema.url, max: 4 });
  });

  afterAll(async () => {
    await pool.end();
    await schema.drop();
  });

  it('creates its table on first use (concurrent first uses included) and hands out disjoint blocks from one row per name', async () => {
    const sources = Array.from(
      { length: 4 },
      () => new PostgresSegmentSource(pool, { schema: schema.schema, tablePrefix: 'first_' }),
    );
    const marks = await Promise.all(Array.from({ length: 40 }, (_, i) => sources[i % 4].reserve('orders', 10)));
    expect([...marks].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => 10 * (i + 1)));
    const rows = (await pool.query(`SELECT name, max FROM ${sources[0].table}`)).rows;
    expect(rows).toEqual([{ name: 'orders', max: '400' }]);
  });

  it('never joins a transaction the caller has open: a block stays taken when that transaction rolls back', async () => {
    // The ambient-transaction slot the other ddd-kit libraries read (see COMMON protocol in the README).
    const storage = ((globalThis as any)[Symbol.for('@ddd-kit/pg-ambient-transaction')] ??=
      new AsyncLocalStorage<unknown>()) as AsyncLocalStorage<unknown>;
    const source = new PostgresSegmentSource(pool, { schema: schema.schema });
    await source.reserve('ambient', 5);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const mark = await storage.run({ pool, client }, () =>
        new SegmentId({ source, key: 'ambient', segmentSize: 5, prefetchSegments: 1 }).generateAsync(),
      );
      expect(mark).toBe('6');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    const max = (await pool.query(`SELECT max FROM ${source.table} WHERE name = 'ambient'`)).rows[0].max;
    expect(Number(max)).toBeGreaterThanOrEqual(10); // the block (5, 10] is still taken
    const next = await new SegmentId({ source, key: 'ambient', segmentSize: 5, prefetchSegments: 1 }).generateAsync();
    expect(Number(next)).toBeGreaterThan(10);
  });

  it('under faults (reply lost, statement run twice, timeout while the server acts) a block is an error or a gap, never handed out twice', async () => {
    const proxied = await proxyUrl('postgres', schema.url);
    const proxy: FaultProxy | undefined = proxied.proxy;
    const through = new pg.Pool({ connectionString: proxied.url, max: 2, query_timeout: CLIENT_TIMEOUT_MS });
    through.on('error', () => undefined);
    try {
      const source = new PostgresSegmentSource(through, { schema: schema.schema, tablePrefix: 'faults_' });
      const direct = new PostgresSegmentSource(pool, { schema: schema.schema, tablePrefix: 'faults_' });
      const marks: number[] = [await source.reserve('f', 10)];
      proxy.dropReply({ match: /INSERT INTO/ });
      await expect(source.reserve('f', 10)).rejects.toThrow();
      proxy.duplicateRequest({ match: /INSERT INTO/ });
      marks.push(await source.reserve('f', 10));
      // The reply is held until the client gave up, however slow the machine.
      proxy.holdReply({ match: /INSERT INTO/ });
      await expect(source.reserve('f', 10)).rejects.toThrow(/timeout/i);
      marks.push(await direct.reserve('f', 10));
      // Every block handed out is disjoint from the others and from the lost ones.
      expect(marks).toEqual([10, 40, 60]);
    } finally {
      await through.end();
      await proxy.close();
    }
  });
});
