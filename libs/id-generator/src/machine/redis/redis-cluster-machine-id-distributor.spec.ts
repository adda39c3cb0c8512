import { describeMachineIdDistributorContract } from '../../testing/machine-id-distributor.contract.js';
import { describeMachineIdProcesses } from '../../__tests__/machine-id-processes.case.js';
import { redisClusterTarget } from '../../__tests__/redis-distributor.target.js';

describeMachineIdDistributorContract('Redis Cluster', redisClusterTarget);
describeMachineIdProcesses('Redis Cluster', redisClusterTarget);
