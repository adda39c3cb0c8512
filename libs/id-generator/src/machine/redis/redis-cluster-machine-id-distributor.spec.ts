import { Cluster } from 'ioredis';
import { redisClusterNodes } from '../../../../../test/support/servers.js';
import { describeRedisMachineIdDistributor } from '../../__tests__/redis-distributor.cases.js';

describeRedisMachineIdDistributor('Redis Cluster', () => new Cluster(redisClusterNodes()));
