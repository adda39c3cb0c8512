// What the holder does beyond the distributor contract (which runs it on every store): it logs
// the release, and gives back a replacement it no longer needs.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  MachineIdHolder,
  MachineIdLostError,
  MachineIdOverflowError,
  RedisMachineIdDistributor,
} from '@ddd-kit/id-generator';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { redisUrl, uniqueName } from '../support/servers.js';
import { sleep, waitFor } from '../support/wait.js';

function recorder() {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      log: (m: string) => void lines.push(`log ${m}`),
      warn: (m: string) => void lines.push(`warn ${m}`),
      error: (m: string) => void lines.push(`error ${m}`),
    },
  };
}

describe('MachineIdHolder', () => {
  let redis: Redis;
  let proxy: FaultProxy;
  let proxied: Redis;
  const namespaces: string[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    const through = await proxyUrl('redis', redisUrl());
    proxy = through.proxy;
    proxied = new Redis(through.url, { retryStrategy: () => 20 });
    proxied.on('error', () => undefined);
  });

  afterAll(async () => {
    const d = new RedisMachineIdDistributor(redis);
    for (const ns of namespaces) await Promise.all(Object.values(d.keys(ns)).map((k) => redis.del(k)));
    proxied.disconnect();
    await proxy.close();
    redis.disconnect();
  });

  function namespace(): string {
    const ns = uniqueName('holder');
    namespaces.push(ns);
    return ns;
  }

  it('logs the release: which machine ID, namespace and instance, and up to when IDs were issued', async () => {
    const ns = namespace();
    const { lines, logger } = recorder();
    const holder = await MachineIdHolder.acquire({
      distributor: new RedisMachineIdDistributor(redis),
      namespace: ns,
      machineBits: 4,
      instanceId: 'web-1',
      logger,
    });
    expect(await holder.release()).toBe(true);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^log Machine ID ${holder.machineId} of namespace "${ns}" released by instance "web-1" \\(IDs issued up to \\d+\\)$`,
        ),
      ),
    ]);
    expect(await holder.release()).toBe(false); // once
  });

  it('released while it keeps failing to replace a lost ID: stops trying, and holds nothing afterwards', async () => {
    const ns = namespace();
    const { lines, logger } = recorder();
    const direct = new RedisMachineIdDistributor(redis, { safeGuardMs: 60_000 });
    const holder = await MachineIdHolder.acquire({
      distributor: new RedisMachineIdDistributor(proxied, { safeGuardMs: 300, guardIntervalMs: 100 }),
      namespace: ns,
      machineBits: 1,
      instanceId: 'paused',
      logger,
    });
    const other = await direct.distribute({ namespace: ns, machineBits: 1, instanceId: 'other' });
    proxy.blackhole();
    // Redis lets the newcomer in once its clock has passed the holder's deadline.
    const taken = await waitFor("the cut-off holder's ID free for a newcomer", () =>
      direct.distribute({ namespace: ns, machineBits: 1, instanceId: 'newcomer' }).catch((error: unknown) => {
        if (error instanceof MachineIdOverflowError) return undefined;
        throw error;
      }),
    );
    expect(taken.machineId).toBe(holder.machineId);
    proxy.heal({ reset: true });
    // The loss is found, and every ID is held: the replacement keeps failing.
    await waitFor('a failed attempt to replace the lost ID', () =>
      lines.some((l) => l.includes('Acquiring a machine ID in place of lost')),
    );
    expect(holder.replacing).toBe(true);
    expect(holder.lease.endedBy).toBeInstanceOf(MachineIdLostError);
    expect(await holder.release()).toBe(false); // nothing of its own to give back
    expect(holder.replacing).toBe(false);
    await direct.revert({
      namespace: ns,
      machineBits: 1,
      instanceId: 'other',
      machineId: other.machineId,
      lastTimestamp: Date.now(),
    });
    // A holder still trying would take the freed ID within its longest retry delay (safeGuardMs);
    // a longer wait only makes this check stricter.
    await sleep(300);
    const owners = await redis.hgetall(direct.keys(ns).owners);
    expect(Object.values(owners)).toEqual(['newcomer']);
  });
});
