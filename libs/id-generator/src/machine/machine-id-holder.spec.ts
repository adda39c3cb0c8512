import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { redisUrl, uniqueName } from '../../../../test/support/servers.js';
import { MachineIdLeaseExpiredError } from '../errors/machine-id-lease-expired.error.js';
import { MachineIdLostError } from '../errors/machine-id-lost.error.js';
import { MachineIdReleasedError } from '../errors/machine-id-released.error.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import { MachineIdHolder } from './machine-id-holder.js';
import { RedisMachineIdDistributor } from './redis/redis-machine-id-distributor.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('MachineIdHolder on Redis', () => {
  let redis: Redis;
  const namespaces: string[] = [];

  beforeAll(() => {
    redis = new Redis(redisUrl());
  });

  afterAll(async () => {
    const d = new RedisMachineIdDistributor(redis);
    for (const ns of namespaces) await Promise.all(Object.values(d.keys(ns)).map((k) => redis.del(k)));
    redis.disconnect();
  });

  function namespace(): string {
    const ns = uniqueName('holder');
    namespaces.push(ns);
    return ns;
  }

  it('heartbeats keep the lease alive past safeGuardMs; release stops generation, then reverts with the latest timestamp', async () => {
    const ns = namespace();
    const distributor = new RedisMachineIdDistributor(redis, { safeGuardMs: 300, guardIntervalMs: 50 });
    const holder = await MachineIdHolder.acquire({ distributor, namespace: ns, machineBits: 4, instanceId: 'a', logger: quiet });
    const generator = new CosIdGenerator({ machineId: holder.machineId, lastTimestamp: holder.lastTimestamp, lease: holder.lease });
    holder.track(generator);
    await sleep(600);
    expect(holder.lease.valid).toBe(true);
    const last = generator.generate();
    expect(await holder.release()).toBe(true);
    await sleep(2);
    await Promise.resolve();
    expect(() => generator.generate()).toThrow(MachineIdReleasedError);
    const keys = distributor.keys(ns);
    expect(await redis.hget(keys.owners, String(holder.machineId))).toBeNull();
    expect(Number(await redis.hget(keys.timestamps, String(holder.machineId)))).toBeGreaterThanOrEqual(generator.parse(last).timestamp);
  });

  it('stops generation when heartbeats fail for the lease period (distributor unreachable), and resumes when one succeeds', async () => {
    const ns = namespace();
    const real = new RedisMachineIdDistributor(redis, { safeGuardMs: 300, guardIntervalMs: 50 });
    let reachable = true;
    const flaky = Object.assign(Object.create(real) as RedisMachineIdDistributor, {
      guard: (state: Parameters<RedisMachineIdDistributor['guard']>[0]) => (reachable ? real.guard(state) : Promise.reject(new Error('connection refused'))),
    });
    const holder = await MachineIdHolder.acquire({ distributor: flaky, namespace: ns, machineBits: 4, instanceId: 'a', logger: quiet });
    const generator = new CosIdGenerator({ machineId: holder.machineId, lease: holder.lease });
    generator.generate();
    reachable = false;
    await sleep(350);
    expect(() => generator.generate()).toThrow(MachineIdLeaseExpiredError);
    reachable = true;
    await holder.heartbeat();
    expect(() => generator.generate()).not.toThrow();
    await holder.release();
  });

  it('a heartbeat after the ID was reclaimed ends the lease for good (MachineIdLostError)', async () => {
    const ns = namespace();
    const distributor = new RedisMachineIdDistributor(redis, { safeGuardMs: 150, guardIntervalMs: 50 });
    const holder = await MachineIdHolder.acquire({ distributor, namespace: ns, machineBits: 1, instanceId: 'a', logger: quiet });
    const generator = new CosIdGenerator({ machineId: holder.machineId, lease: holder.lease });
    generator.generate();
    // Simulate a long partition: the heartbeat stops while another instance reclaims the ID.
    (holder as unknown as { stopHeartbeat(): void }).stopHeartbeat();
    await distributor.distribute({ namespace: ns, machineBits: 1, instanceId: 'b' });
    await sleep(200);
    const taken = await distributor.distribute({ namespace: ns, machineBits: 1, instanceId: 'c' });
    expect(taken.machineId).toBe(holder.machineId);
    await holder.heartbeat();
    await sleep(2);
    await Promise.resolve();
    expect(() => generator.generate()).toThrow(MachineIdLostError);
    expect(await holder.release()).toBe(false); // nothing to give back: it is c's now
    expect(await redis.hget(distributor.keys(ns).owners, String(holder.machineId))).toBe('c');
  });
});
