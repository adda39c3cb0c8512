import { mongoLabel } from '../../../test/support/servers.js';
import { chaosCase } from './support/chaos.js';
import { redisAndMongo } from './support/deployments.js';

/**
 * The sample keeps one user per name through any fault (SPEC §4). Instances of the built app
 * reach every store through a fault proxy of their own; clients register, rename and delete at
 * random while the proxies lose replies (cutting the connection), delay replies and reset
 * connections; then faults off, one reconciliation, and the invariants checked on the stores
 * themselves (support/chaos.ts).
 */
chaosCase({ label: `Redis + ${mongoLabel()}`, deployment: redisAndMongo, instances: 2, faultRate: 0.03 });
