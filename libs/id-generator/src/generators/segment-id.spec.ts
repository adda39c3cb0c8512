import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { redisClusterNodes, redisUrl, uniqueName } from '../../../../test/support/servers.js';
import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import { SegmentExhaustedError } from '../errors/segment-exhausted.error.js';
import { SegmentId } from './segment-id.js';

describe.each([
  ['Redis', () => new Redis(redisUrl())],
  ['Redis Cluster', () => new Cluster(redisClusterNodes())],
] as Array<[string, () => Redis | Cluster]>)('SegmentId on %s', (_label, connect) => {
  let redis: Redis | Cluster;
  const keys: string[] = [];

  beforeAll(() => {
    redis = connect();
  });

  afterAll(async () => {
    for (const key of keys) await redis.del(key);
    redis.disconnect();
  });

  function key(): string {
    const k = uniqueName('segment');
    keys.push(k);
    return k;
  }

  it('numbers from many generators on one key never collide, and each generator counts up', async () => {
    const k = key();
    const generators = Array.from({ length: 6 }, () => new SegmentId({ redis, key: k, segmentSize: 97, prefetchSegments: 2 }));
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
    const g = await new SegmentId({ redis, key: key(), segmentSize: 10, prefetchSegments: 2 }).ready();
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
    await redis.set(k, '9990');
    const g = await new SegmentId({ redis, key: k, segmentSize: 30, prefetchSegments: 1 }).ready();
    const texts = Array.from({ length: 30 }, () => g.generate());
    expect(texts).toEqual(Array.from({ length: 30 }, (_, i) => String(9991 + i)));
    g.close();
  });

  it('rejects bad options and a closed generator', async () => {
    expect(() => new SegmentId({ redis, key: '' })).toThrow(IdGeneratorOptionsError);
    expect(() => new SegmentId({ redis, key: 'k', segmentSize: 0 })).toThrow(IdGeneratorOptionsError);
    expect(() => new SegmentId({ redis: undefined as never, key: 'k' })).toThrow(IdGeneratorOptionsError);
    const g = new SegmentId({ redis, key: key() });
    g.close();
    await expect(g.generateAsync()).rejects.toThrow(/closed/);
  });
});
