// The unique-key contract with reservations on Redis Cluster, against every repository backend.
import { describeUniqueKeysOn } from './support/unique-key-backends.js';

describeUniqueKeysOn('redis-cluster');
