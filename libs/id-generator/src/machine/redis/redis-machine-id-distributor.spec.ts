// What needs no Redis: the key layout and the option checks. The distributor on Redis and Redis
// Cluster is tested in test/id-generator/.
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { IdGeneratorOptionsError } from '../../errors.js';
import { RedisMachineIdDistributor } from './redis-machine-id-distributor.js';

describe('RedisMachineIdDistributor (no Redis)', () => {
  // Never connects: nothing here sends a command.
  const redis = new Redis({ lazyConnect: true });

  afterAll(() => {
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
});
