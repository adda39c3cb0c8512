import { describe, expect, it } from '@jest/globals';
import { mongoLabel } from '../../../test/support/servers.js';
import { memoryOnly, postgresOnly, redisAndMongo, type Deployment } from './support/deployments.js';
import { runChaos, summary } from './support/chaos.js';

/**
 * The sample keeps one user per name through any fault (SPEC §4). Instances of the built app
 * reach every store through a fault proxy of their own; clients register, rename and delete at
 * random while the proxies lose replies (cutting the connection), delay replies and reset
 * connections; then faults off, one reconciliation, and the invariants checked on the stores
 * themselves. The seed is printed; set CHAOS_SEED to replay one, CHAOS_DURATION_MS to run longer.
 */
const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const DURATION_MS = Number(process.env.CHAOS_DURATION_MS ?? 20_000);

const cases: Array<{
  label: string;
  deployment: () => Deployment | Promise<Deployment>;
  instances: number;
  faultRate: number;
}> = [
  { label: `Redis + ${mongoLabel()}`, deployment: redisAndMongo, instances: 2, faultRate: 0.03 },
  { label: 'PostgreSQL', deployment: postgresOnly, instances: 2, faultRate: 0.03 },
  // One process (memory is not shared), no store to fault: the same invariants.
  { label: 'memory', deployment: memoryOnly, instances: 1, faultRate: 0 },
];

describe('chaos: one user per name through any fault', () => {
  for (const c of cases) {
    it(
      `on ${c.label}: ${c.faultRate > 0 ? `${c.instances} instances, ${DURATION_MS} ms of faults` : `${DURATION_MS} ms of load, no faults`} (seed ${SEED})`,
      async () => {
        const deployment = await c.deployment();
        try {
          const report = await runChaos(deployment, {
            seed: SEED,
            durationMs: DURATION_MS,
            instances: c.instances,
            clients: 6,
            names: 12,
            faultRate: c.faultRate,
          });
          process.stdout.write(`\n[chaos on ${deployment.label}]\n${summary(report)}\n`);
          if (c.faultRate > 0) expect(report.faults).toBeGreaterThan(0);
          expect(report.statuses['POST 201'] ?? 0).toBeGreaterThan(0);
          expect(report.violations).toEqual([]);
        } finally {
          await deployment.close();
        }
      },
      DURATION_MS + 180_000,
    );
  }
});
