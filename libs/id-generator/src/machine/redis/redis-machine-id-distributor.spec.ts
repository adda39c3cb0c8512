import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { redisUrl, uniqueName } from '../../../../../test/support/servers.js';
import { describeMachineIdDistributorContract } from '../../testing/machine-id-distributor.contract.js';
import { describeMachineIdProcesses } from '../../__tests__/machine-id-processes.case.js';
import { redisTarget } from '../../__tests__/redis-distributor.target.js';
import { IdGeneratorOptionsError } from '../../errors/id-generator-options.error.js';
import { RedisMachineIdDistributor } from './redis-machine-id-distributor.js';

describeMachineIdDistributorContract('Redis', redisTarget);
describeMachineIdProcesses('Redis', redisTarget);

describe('RedisMachineIdDistributor on Redis', () => {
  const redis = new Redis(redisUrl());
  const namespaces: string[] = [];

  afterAll(async () => {
    const d = new RedisMachineIdDistributor(redis);
    for (const ns of namespaces) await Promise.all(Object.values(d.keys(ns)).map((k) => redis.del(k)));
    redis.disconnect();
  });

  it('keys(): one hash tag per namespace, whatever characters it holds; keyPrefix as given', () => {
    const d = new RedisMachineIdDistributor(redis, { keyPrefix: 'app:ids:' });
    expect(d.keys('orders:{eu}%')).toEqual({
      owners: 'app:ids:{orders%3A%7Beu%7D%25}:owners',
      instances: 'app:ids:{orders%3A%7Beu%7D%25}:instances',
      timestamps: 'app:ids:{orders%3A%7Beu%7D%25}:timestamps',
      deadlines: 'app:ids:{orders%3A%7Beu%7D%25}:deadlines',
      released: 'app:ids:{orders%3A%7Beu%7D%25}:released',
      meta: 'app:ids:{orders%3A%7Beu%7D%25}:meta',
      bounds: 'app:ids:{orders%3A%7Beu%7D%25}:bounds',
    });
    expect(() => new RedisMachineIdDistributor(redis, { keyPrefix: 'a{b}' })).toThrow(IdGeneratorOptionsError);
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
