import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { toTtlAt, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { describePrepareKeyContract, PREPARE_KEY_FAULTS } from '@ddd-kit/prepare-key/testing';
import { redisClusterFaultTarget } from '../support/fault-proxy/prepare-key-fault-targets.js';
import { OPERATION_TIMEOUT_MS } from '../support/fault-proxy/fault-timing.js';
import { redisClusterNodes, uniqueName } from '../support/servers.js';
import {
  PREPARE,
  READ,
  REPREPARE,
  ROLLBACK,
} from '../../libs/prepare-key/src/backends/redis/redis-prepare-key.scripts.js';

// On a Cluster the seal is a key in each of the 16,384 slots: a fresh factory checks (and on a
// fresh prefix, restores and sets) all of them, seconds a time. Factories opened for every case
// run without it; the seal on a Cluster has tests of its own (unique-keys.data-loss.spec.ts,
// and the first contract below seals its store once: 16,384 checks, 1,024 at a time, each under
// the operation deadline, which a machine loaded many times over missed at the default 2 s; the
// deadline has tests of its own, so here it is the fault cases' generous one).
describePrepareKeyContract(
  'Redis Cluster',
  async () => {
    const cluster = new Cluster(redisClusterNodes());
    const prefix = uniqueName('pk_contract');
    const injector = await redisClusterFaultTarget(redisClusterNodes(), prefix, { seal: false });
    return {
      factory: new RedisPrepareKeyFactory(cluster, {
        keyPrefix: `${prefix}:`,
        operationTimeoutMs: OPERATION_TIMEOUT_MS,
      }),
      faults: injector.faults,
      close: async () => {
        await injector.close();
        await cluster.quit();
      },
    };
  },
  { faults: PREPARE_KEY_FAULTS, concurrentFaults: true },
);

describePrepareKeyContract('Redis Cluster with auto-pipelining', () => {
  const cluster = new Cluster(redisClusterNodes(), { enableAutoPipelining: true });
  return {
    factory: new RedisPrepareKeyFactory(cluster, { keyPrefix: `${uniqueName('pk_contract')}:`, seal: false }),
    close: async () => void (await cluster.quit()),
  };
});

describe('RedisPrepareKeyFactory on a Redis Cluster', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = new Cluster(redisClusterNodes());
    await cluster.ping();
  });

  afterAll(async () => {
    await cluster.quit();
  });

  it('hash-tags each record with its own (name, key), so one name spreads over every master', async () => {
    const prefix = uniqueName('spread');
    const pk = new RedisPrepareKeyFactory(cluster, { keyPrefix: `${prefix}:` }).create('n{x}');
    const keys = Array.from({ length: 60 }, (_, i) => `k{${i}}`);
    await Promise.all(keys.map((key) => pk.prepare(key, key)));

    // The slot of each record key is the slot of its tag: the encoded pair, braces and all encoded.
    const slot = (key: string) => cluster.cluster('KEYSLOT', key) as Promise<number>;
    expect(await slot(`${prefix}:{n%7Bx%7D:k%7B1%7D}`)).toBe(await slot('n%7Bx%7D:k%7B1%7D'));

    const perMaster = await Promise.all(
      cluster
        .nodes('master')
        .map(async (node) => (await node.scan('0', 'MATCH', `${prefix}:{n%7Bx%7D:*`, 'COUNT', 100_000))[1].length),
    );
    expect(perMaster.filter((n) => n > 0).length).toBe(cluster.nodes('master').length);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(keys.length);

    // Listing visits every master, page by page, each record once.
    for (const pageSize of [1, 7, 500]) {
      const listed: string[] = [];
      for await (const record of pk.records({ pageSize })) listed.push(record.key);
      expect(listed.sort()).toEqual([...keys].sort());
    }
  });

  it('lists every record through a Cluster client that has not connected yet', async () => {
    const prefix = uniqueName('fresh');
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const pk = new RedisPrepareKeyFactory(cluster, { keyPrefix: `${prefix}:` }).create('n');
    await Promise.all(keys.map((key) => pk.prepare(key, key)));

    const fresh = new Cluster(redisClusterNodes());
    try {
      const listed: string[] = [];
      for await (const record of new RedisPrepareKeyFactory(fresh, { keyPrefix: `${prefix}:` }).create('n').records())
        listed.push(record.key);
      expect(listed.sort()).toEqual([...keys].sort());
    } finally {
      await fresh.quit();
    }
  });

  it.each([false, true])(
    'reloads its scripts on every master after SCRIPT FLUSH (auto-pipelining: %s)',
    async (enableAutoPipelining) => {
      const client = new Cluster(redisClusterNodes(), { enableAutoPipelining });
      try {
        const pk = new RedisPrepareKeyFactory(client, { keyPrefix: `${uniqueName('noscript')}:` }).create('n');
        const masters = cluster.nodes('master');
        await Promise.all(masters.map((node) => node.script('FLUSH')));
        const keys = Array.from({ length: 30 }, (_, i) => `k${i}`); // lands on every master
        const ttlAt = Date.now() + 60_000;
        expect(await Promise.all(keys.map((key) => pk.prepare(key, toTtlAt(key, ttlAt))))).toEqual(
          keys.map(() => true),
        );
        // Held with a ttlAt: the SET … NX GET leaves these to the PREPARE script.
        expect(await Promise.all(keys.map((key) => pk.prepare(key, key)))).toEqual(keys.map(() => false));
        expect(await Promise.all(keys.map((key) => pk.get(key)))).toEqual(keys);
        expect(await Promise.all(keys.map((key) => pk.reprepare(key, key, `${key}!`)))).toEqual(keys.map(() => true));
        expect(await Promise.all(keys.map((key) => pk.rollback(key, `${key}!`)))).toEqual(keys.map(() => true));
        for (const node of masters) {
          expect(await node.script('EXISTS', PREPARE.sha, READ.sha, REPREPARE.sha, ROLLBACK.sha)).toEqual([1, 1, 1, 1]);
        }
      } finally {
        await client.quit();
      }
    },
  );
});
