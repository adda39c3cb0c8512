import { Redis } from 'ioredis';
import { redisUrl } from '../../../../../test/support/servers.js';
import { describeRedisMachineIdDistributor } from '../../__tests__/redis-distributor.cases.js';

describeRedisMachineIdDistributor('Redis', () => new Redis(redisUrl()));
