import { describeMachineIdDistributorContract } from '@ddd-kit/id-generator/testing';
import { describeMachineIdProcesses } from './support/machine-id-processes.case.js';
import { redisClusterTarget } from './support/redis-distributor.target.js';

describeMachineIdDistributorContract('Redis Cluster', redisClusterTarget);
describeMachineIdProcesses('Redis Cluster', redisClusterTarget);
