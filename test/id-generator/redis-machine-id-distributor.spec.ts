import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { describeMachineIdDistributorContract } from '@ddd-kit/id-generator/testing';
import { redisUrl, uniqueName } from '../support/servers.js';
import { describeMachineIdProcesses } from './support/machine-id-processes.case.js';
import { redisTarget } from './support/redis-distributor.target.js';

describeMachineIdDistributorContract('Redis', redisTarget);
describeMachineIdProcesses('Redis', redisTarget);

describe('RedisMachineIdDistributor on Redis', () => {
  // Connected in beforeAll: a run that filters this describe's case out skips both hooks.
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

  it('survives a flushed script cache (EVALSHA falls back to EVAL on NOSCRIPT)', async () => {
    const namespace = uniqueName('noscript');
    namespaces.push(namespace);
    const distributor = new RedisMachineIdDistributor(redis);
    await distributor.distribute({ namespace, machineBits: 4, instanceId: 'before' });
    await redis.script('FLUSH');
    const after = await distributor.distribute({ namespace, machineBits: 4, instanceId: 'after' });
    expect(after.machineId).toBe(1);
  });
});
