import { describe, expect, it } from '@jest/globals';
import { mongoLabel } from '../../../test/support/servers.js';
import { CRASH_OPTIONS as OPTIONS, runCrash } from './support/crash.js';
import { redisAndMongo } from './support/deployments.js';

/**
 * The sample under load, its processes killed with SIGKILL at random moments and restarted (see
 * support/crash.ts; CRASH_SEED replays a run). One file a deployment, so that they run side by side.
 * On Redis + MongoDB a crash between two stores' writes leaves a reservation to repair: there the
 * invariants hold after one reconciliation, and what it had to repair is reported.
 */
const SEED = OPTIONS.seed;

describe('crash: processes killed with SIGKILL under load', () => {
  it(`on Redis + ${mongoLabel()}: the invariants hold after one reconciliation (seed ${SEED})`, async () => {
    const deployment = redisAndMongo();
    try {
      const report = await runCrash(deployment, OPTIONS);
      process.stdout.write(
        `\n[crash on Redis + ${mongoLabel()}]\n${JSON.stringify({ ...report, state: undefined, users: report.state.users.length, repairedByReconciliation: report.beforeReconcile.length }, null, 2)}\n`,
      );
      expect(report.kills).toBe(OPTIONS.kills);
      // Even as the crashes left it: never two users with one name, and every user's name reserved
      // by that user (a name is reserved before its user is written, released after). What only
      // reconciliation repairs is a reservation left behind by a crash between the two steps.
      expect(report.beforeReconcile.filter((b) => b.startsWith('users ') || b.startsWith('user '))).toEqual([]);
      expect(report.afterReconcile).toEqual([]);
    } finally {
      await deployment.close();
    }
  }, 240_000);
});
