// Cases every deployment of RedisMachineIdDistributor must pass: run against a single Redis
// and against a Redis Cluster (each namespace's keys must share one slot there).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Cluster, Redis } from 'ioredis';
import { uniqueName } from '../../../../test/support/servers.js';
import { ClockBackwardsError } from '../errors/clock-backwards.error.js';
import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import { MachineIdLostError } from '../errors/machine-id-lost.error.js';
import { MachineIdOverflowError } from '../errors/machine-id-overflow.error.js';
import { RedisMachineIdDistributor, type RedisMachineIdDistributorOptions } from '../machine/redis/redis-machine-id-distributor.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function describeRedisMachineIdDistributor(label: string, connect: () => Redis | Cluster): void {
  describe(`RedisMachineIdDistributor on ${label}`, () => {
    let redis: Redis | Cluster;
    const namespaces: string[] = [];

    beforeAll(() => {
      redis = connect();
    });

    afterAll(async () => {
      const d = new RedisMachineIdDistributor(redis);
      for (const ns of namespaces) await Promise.all(Object.values(d.keys(ns)).map((k) => redis.del(k)));
      redis.disconnect();
    });

    /** A fresh namespace (with characters that must not break the key syntax) and its distributor. */
    function setUp(options: RedisMachineIdDistributorOptions = {}) {
      const namespace = `${uniqueName('machine')}:{tag}%é`;
      namespaces.push(namespace);
      const distributor = new RedisMachineIdDistributor(redis, options);
      return { namespace, distributor, keys: distributor.keys(namespace) };
    }

    it('hands distinct IDs to concurrent instances', async () => {
      const { namespace, distributor } = setUp();
      const results = await Promise.all(
        Array.from({ length: 48 }, (_, i) => distributor.distribute({ namespace, machineBits: 6, instanceId: `instance-${i}` })),
      );
      const ids = results.map((r) => r.machineId);
      expect(new Set(ids).size).toBe(48);
      expect(ids.every((id) => id >= 0 && id < 64)).toBe(true);
      expect(results.every((r) => r.lastTimestamp === 0)).toBe(true);
    });

    it('runs out with small machineBits (MachineIdOverflowError), and a revert frees an ID for the next instance', async () => {
      const { namespace, distributor, keys } = setUp();
      const held = await Promise.all([0, 1, 2, 3].map((i) => distributor.distribute({ namespace, machineBits: 2, instanceId: `i${i}` })));
      expect(held.map((h) => h.machineId).sort()).toEqual([0, 1, 2, 3]);
      await expect(distributor.distribute({ namespace, machineBits: 2, instanceId: 'late' })).rejects.toThrow(MachineIdOverflowError);
      expect(await redis.hget(keys.instances, 'late')).toBeNull();

      const revertedAt = Date.now();
      expect(await distributor.revert({ namespace, machineBits: 2, instanceId: 'i2', machineId: held[2].machineId, lastTimestamp: revertedAt })).toBe(true);
      const late = await distributor.distribute({ namespace, machineBits: 2, instanceId: 'late' });
      expect(late).toEqual({ machineId: held[2].machineId, lastTimestamp: revertedAt });
      expect(await redis.hget(keys.owners, String(late.machineId))).toBe('late');
    });

    it('reuses a released ID with its stored timestamp, resolving only once the clock is past it', async () => {
      const { namespace, distributor } = setUp();
      const a = await distributor.distribute({ namespace, machineBits: 4, instanceId: 'a' });
      const ahead = Date.now() + 300; // the previous holder's clock ran ahead
      await distributor.revert({ namespace, machineBits: 4, instanceId: 'a', machineId: a.machineId, lastTimestamp: ahead });
      const b = await distributor.distribute({ namespace, machineBits: 4, instanceId: 'b' });
      expect(b).toEqual({ machineId: a.machineId, lastTimestamp: ahead });
      expect(Date.now()).toBeGreaterThan(ahead);
    });

    it('gives the ID back and fails when a reused ID is too far ahead of the clock', async () => {
      const { namespace, distributor, keys } = setUp({ maxClockWaitMs: 200 });
      const a = await distributor.distribute({ namespace, machineBits: 4, instanceId: 'a' });
      await distributor.revert({ namespace, machineBits: 4, instanceId: 'a', machineId: a.machineId, lastTimestamp: Date.now() + 60_000 });
      await expect(distributor.distribute({ namespace, machineBits: 4, instanceId: 'b' })).rejects.toThrow(ClockBackwardsError);
      expect(await redis.zscore(keys.released, String(a.machineId))).not.toBeNull();
      expect(await redis.hget(keys.owners, String(a.machineId))).toBeNull();
    });

    it('reclaims a silent instance only after safeGuardMs, and a heartbeat after the reclaim reports the loss', async () => {
      const safeGuardMs = 600;
      const { namespace, distributor, keys } = setUp({ safeGuardMs, guardIntervalMs: 100 });
      const live = await distributor.distribute({ namespace, machineBits: 1, instanceId: 'live' });
      const silent = await distributor.distribute({ namespace, machineBits: 1, instanceId: 'silent' });
      const silentReport = Date.now();
      await distributor.guard({ namespace, machineBits: 1, instanceId: 'silent', machineId: silent.machineId, lastTimestamp: silentReport });
      const silentSince = Date.now();

      // "live" keeps heartbeating; "silent" stops.
      let beating = true;
      const beats = (async () => {
        while (beating) {
          await distributor.guard({ namespace, machineBits: 1, instanceId: 'live', machineId: live.machineId, lastTimestamp: Date.now() });
          await sleep(100);
        }
      })();
      try {
        let attempts = 0;
        let taken: { machineId: number; lastTimestamp: number } | undefined;
        while (!taken) {
          try {
            taken = await distributor.distribute({ namespace, machineBits: 1, instanceId: 'newcomer' });
          } catch (error) {
            expect(error).toBeInstanceOf(MachineIdOverflowError);
            attempts++;
            await sleep(50);
          }
        }
        const at = Date.now();
        expect(attempts).toBeGreaterThan(3); // refused while the silence was shorter than safeGuardMs
        expect(at - silentSince).toBeGreaterThanOrEqual(safeGuardMs - 20);
        expect(taken.machineId).toBe(silent.machineId); // never the live instance's
        // The newcomer starts after anything the silent holder could still have issued.
        expect(taken.lastTimestamp).toBeGreaterThanOrEqual(silentReport + safeGuardMs);
        expect(await redis.hget(keys.owners, String(live.machineId))).toBe('live');
        expect(await redis.hget(keys.instances, 'silent')).toBeNull();

        await expect(distributor.guard({ namespace, machineBits: 1, instanceId: 'silent', machineId: silent.machineId, lastTimestamp: Date.now() })).rejects.toThrow(
          MachineIdLostError,
        );
        // Nor may the former holder release what is now the newcomer's.
        expect(await distributor.revert({ namespace, machineBits: 1, instanceId: 'silent', machineId: silent.machineId, lastTimestamp: Date.now() })).toBe(false);
        expect(await redis.hget(keys.owners, String(silent.machineId))).toBe('newcomer');
      } finally {
        beating = false;
        await beats;
      }
    });

    it('keeps giving an instance the ID it already holds', async () => {
      const { namespace, distributor } = setUp();
      const first = await distributor.distribute({ namespace, machineBits: 8, instanceId: 'stable-pod-0' });
      await distributor.distribute({ namespace, machineBits: 8, instanceId: 'other' });
      const again = await distributor.distribute({ namespace, machineBits: 8, instanceId: 'stable-pod-0' });
      expect(again.machineId).toBe(first.machineId);
    });

    it('keeps namespaces apart and refuses a second machineBits in one namespace', async () => {
      const one = setUp();
      const two = setUp();
      const a = await one.distributor.distribute({ namespace: one.namespace, machineBits: 3, instanceId: 'x' });
      const b = await two.distributor.distribute({ namespace: two.namespace, machineBits: 3, instanceId: 'y' });
      expect([a.machineId, b.machineId]).toEqual([0, 0]);
      await expect(one.distributor.distribute({ namespace: one.namespace, machineBits: 5, instanceId: 'z' })).rejects.toThrow(/3 bits, not 5/);
    });

    it('rejects bad requests before touching Redis', async () => {
      const { namespace, distributor, keys } = setUp();
      await expect(distributor.distribute({ namespace, machineBits: 0, instanceId: 'a' })).rejects.toThrow(IdGeneratorOptionsError);
      await expect(distributor.distribute({ namespace, machineBits: 40, instanceId: 'a' })).rejects.toThrow(IdGeneratorOptionsError);
      await expect(distributor.distribute({ namespace, machineBits: 4, instanceId: '' })).rejects.toThrow(IdGeneratorOptionsError);
      await expect(distributor.distribute({ namespace: '', machineBits: 4, instanceId: 'a' })).rejects.toThrow(IdGeneratorOptionsError);
      expect(await redis.exists(keys.meta)).toBe(0);
      expect(() => new RedisMachineIdDistributor(redis, { safeGuardMs: 1_000, guardIntervalMs: 500 })).toThrow(IdGeneratorOptionsError);
      expect(() => new RedisMachineIdDistributor(redis, { keyPrefix: 'a{b}' })).toThrow(IdGeneratorOptionsError);
    });

    it('survives a flushed script cache (EVALSHA falls back to EVAL on NOSCRIPT)', async () => {
      const { namespace, distributor } = setUp();
      await distributor.distribute({ namespace, machineBits: 4, instanceId: 'before' });
      const nodes = 'nodes' in redis && typeof (redis as Cluster).nodes === 'function' ? (redis as Cluster).nodes('master') : [redis as Redis];
      await Promise.all(nodes.map((node) => node.script('FLUSH')));
      const after = await distributor.distribute({ namespace, machineBits: 4, instanceId: 'after' });
      expect(after.machineId).toBe(1);
    });
  });
}
