import { describe, expect, it } from '@jest/globals';
import { CRASH_OPTIONS as OPTIONS, runCrash } from './support/crash.js';
import { postgresOnly } from './support/deployments.js';

/**
 * The sample under load, its processes killed with SIGKILL at random moments and restarted (see
 * support/crash.ts; CRASH_SEED replays a run). One file a deployment, so that they run side by side.
 * On PostgreSQL a request is one transaction (reservation, user and all): the invariants of
 * SPEC §4 hold as the crashes left the stores, with no reconciliation.
 */
const SEED = OPTIONS.seed;

describe('crash: processes killed with SIGKILL under load', () => {
  it(`on PostgreSQL, with no reconciliation: no two users share a name, every name reserved by its user, no reservation without it; the read model converges (seed ${SEED})`, async () => {
    const deployment = await postgresOnly();
    try {
      const report = await runCrash(deployment, { ...OPTIONS, readModelConverges: true });
      process.stdout.write(
        `\n[crash on PostgreSQL]\n${JSON.stringify({ ...report, state: undefined, users: report.state.users.length }, null, 2)}\n`,
      );
      expect(report.kills).toBe(OPTIONS.kills);
      expect(report.statuses['POST 201'] ?? 0).toBeGreaterThan(0);
      expect(report.beforeReconcile).toEqual([]);
      expect(report.afterReconcile).toEqual([]);
      // runCrash waited, before any reconciliation, until the read model showed exactly these users.
      expect(report.converged).toEqual((await deployment.models()).users);
    } finally {
      await deployment.close();
    }
  }, 600_000);
});
