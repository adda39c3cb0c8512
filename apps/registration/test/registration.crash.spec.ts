import { describe, expect, it } from '@jest/globals';
import { mongoLabel } from '../../../test/support/servers.js';
import { runCrash } from './support/crash.js';
import { postgresOnly, redisAndMongo } from './support/deployments.js';

/**
 * The sample under load, its processes killed with SIGKILL at random moments and restarted.
 * On PostgreSQL a request is one transaction (reservation, user and all): the invariants of
 * SPEC §4 hold as the crashes left the stores, with no reconciliation. On Redis + MongoDB a
 * crash between two stores' writes leaves a reservation to repair: there the invariants hold
 * after one reconciliation, and what it had to repair is reported. CRASH_SEED replays a run.
 */
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const OPTIONS = {
  seed: SEED,
  kills: 8,
  instances: 2,
  clients: 6,
  names: 12,
  betweenKillsMs: [300, 900] as [number, number],
};

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
