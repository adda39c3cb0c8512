import { mulberry32 } from '../../../../test/support/fault-proxy/index.js';
import { breaches, type Deployment, type StoredState, type UserVersion } from './deployments.js';
import { sleep, waitFor } from '../../../../test/support/wait.js';
import { runLoad, type LoadReport } from './load.js';

export interface CrashOptions {
  seed: number;
  /** How many times an instance is killed with SIGKILL (and started again). */
  kills: number;
  instances: number;
  clients: number;
  names: number;
  /** The pause between kills is drawn from [min, max] ms. */
  betweenKillsMs: [number, number];
  /**
   * After the load, wait (instances running, no reconciliation) until the read model shows
   * exactly the write model's users: events stored with their writes reach it even when the
   * process that wrote them was killed before its handlers ran.
   */
  readModelConverges?: boolean;
}

export interface CrashReport extends LoadReport {
  seed: number;
  kills: number;
  /** The invariants broken before any reconciliation, and after one. */
  beforeReconcile: string[];
  afterReconcile: string[];
  reconcile: unknown;
  state: StoredState;
  /**
   * With `readModelConverges`: the write model's users once the load stopped, which the read
   * model came to show exactly (each user at its version, no other entry) while the instances
   * kept running, before any reconciliation.
   */
  converged?: UserVersion[];
}

/**
 * Instances of the built app under load, killed with SIGKILL at random moments (at least
 * `kills` times) and started again, while clients keep registering, renaming and deleting.
 * Then the stores are read as the crashes left them, before and after one reconciliation.
 */
export async function runCrash(deployment: Deployment, options: CrashOptions): Promise<CrashReport> {
  const random = mulberry32(options.seed);
  const running = await deployment.start({ instances: options.instances, proxied: false });
  let load: LoadReport;
  let kills = 0;
  let converged: UserVersion[] | undefined;
  try {
    const names = Array.from({ length: options.names }, (_, i) => `crash${options.seed % 10_000}n${i}`);
    let done = false;
    const loading = runLoad({
      urls: () => running.urls,
      seed: options.seed,
      clients: options.clients,
      names,
      until: () => done,
    });
    const [min, max] = options.betweenKillsMs;
    while (kills < options.kills) {
      await sleep(min + random() * (max - min));
      const victim = Math.floor(random() * running.urls.length);
      await running.kill(victim);
      kills++;
      await running.restart(victim);
    }
    await sleep(min);
    done = true;
    load = await loading;
    if (options.readModelConverges) {
      // A killed instance's claims wait for their lease to run out: the bound is well above it.
      const { users } = await deployment.models();
      await waitFor(
        'the read model to converge on the stored users',
        async () => {
          expect((await deployment.models()).views).toEqual(users);
          return true;
        },
        { timeoutMs: 120_000 },
      );
      converged = users;
    }
  } finally {
    await running.stop();
  }
  const before = await deployment.inspect();
  const beforeReconcile = breaches(before);
  const reconcile = await deployment.reconcile();
  const state = await deployment.inspect();
  return {
    ...load!,
    seed: options.seed,
    kills,
    beforeReconcile,
    afterReconcile: breaches(state),
    reconcile,
    state,
    converged,
  };
}

/** The runs of the crash specs: CRASH_SEED replays one. */
export const CRASH_OPTIONS: CrashOptions = {
  seed: Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31)),
  kills: 8,
  instances: 2,
  clients: 6,
  names: 12,
  betweenKillsMs: [300, 900],
};
