import { describeMachineIdDistributorContract } from '../../testing/machine-id-distributor.contract.js';
import { redisClusterTarget } from '../../__tests__/redis-distributor.target.js';

describeMachineIdDistributorContract('Redis Cluster', redisClusterTarget);
