import { describe, expect, it } from '@jest/globals';
import { breaches, type Deployment, type StoredState } from './deployments.js';
import { runLoad, type LoadReport } from './load.js';

/**
 * A chaos run of the sample: instances whose every store connection goes through a fault proxy,
 * random registrations, renames and deletions from several clients for a bounded time while the
 * proxies lose replies (and cut the connection), delay replies and reset connections; then
 * faults off, one reconciliation, and the stores read directly. A run is reproducible from its
 * seed as far as the faults and the clients' choices go (the interleaving is the machine's).
 */
export interface ChaosOptions {
  seed: number;
  durationMs: number;
  instances: number;
  clients: number;
  /** Size of the pool of usernames the clients fight over. */
  names: number;
  /** Probability that a reply suffers a fault (0: no faults). */
  faultRate: number;
}

export interface ChaosReport extends LoadReport {
  seed: number;
  faults: number;
  faultsByKind: Record<string, number>;
  reconcile: unknown;
  state: StoredState;
  /** The invariants of SPEC §4 broken after reconciliation, in words. */
  violations: string[];
  /** A registration of every stored user's name, attempted afterwards: each must be a 409. */
  reRegistrations: Record<string, number>;
}

export async function runChaos(deployment: Deployment, options: ChaosOptions): Promise<ChaosReport> {
  const running = await deployment.start({ instances: options.instances, proxied: options.faultRate > 0 });
  let load: LoadReport;
  const faultsByKind: Record<string, number> = {};
  try {
    running.proxies.forEach((proxy, i) =>
      proxy.random({
        seed: options.seed * 31 + i,
        rate: options.faultRate,
        kinds: ['drop-reply-cut', 'delay', 'reset-mid-reply'],
        maxDelayMs: 300,
      }),
    );
    const names = Array.from({ length: options.names }, (_, i) => `chaos${options.seed % 10_000}n${i}`);
    const deadline = Date.now() + options.durationMs;
    load = await runLoad({
      urls: () => running.urls,
      seed: options.seed,
      clients: options.clients,
      names,
      until: () => Date.now() >= deadline,
    });
    // Faults off; what was in flight settles.
    for (const proxy of running.proxies) {
      proxy.clear();
      proxy.heal();
      for (const [kind, n] of Object.entries(proxy.stats)) faultsByKind[kind] = (faultsByKind[kind] ?? 0) + n;
    }
  } finally {
    if (deployment.processes) await running.stop();
  }

  const reconcile = await deployment.reconcile();
  const state = await deployment.inspect();
  const violations = breaches(state);

  // A new registration of every stored user's name must be refused.
  const reRegistrations: Record<string, number> = {};
  const checker = deployment.processes ? await deployment.start({ instances: 1, proxied: false }) : running;
  try {
    for (const user of state.users) {
      const response = await fetch(`${checker.urls[0]}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: user.username }),
      });
      reRegistrations[response.status] = (reRegistrations[response.status] ?? 0) + 1;
      if (response.status !== 409)
        violations.push(
          `registering '${user.username}' (held by user ${user.id}) again answered ${response.status}, not 409`,
        );
    }
  } finally {
    if (deployment.processes) await checker.stop();
  }
  const faults = Object.values(faultsByKind).reduce((a, b) => a + b, 0);
  return { ...load!, seed: options.seed, faults, faultsByKind, reconcile, state, violations, reRegistrations };
}

export function summary(report: ChaosReport): string {
  const { state, ...rest } = report;
  return JSON.stringify(
    {
      ...rest,
      users: state.users.length,
      reservations: state.reservations.length,
      violations: report.violations.slice(0, 20),
    },
    null,
    2,
  );
}

/**
 * The chaos case of one deployment, as a test (SPEC §4: one user per name through any fault);
 * CHAOS_SEED replays a run, CHAOS_DURATION_MS runs longer. One spec file a deployment, so that
 * they run side by side.
 */
export function chaosCase(c: {
  label: string;
  deployment: () => Deployment | Promise<Deployment>;
  instances: number;
  faultRate: number;
}): void {
  const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const durationMs = Number(process.env.CHAOS_DURATION_MS ?? 20_000);
  describe('chaos: one user per name through any fault', () => {
    it(
      `on ${c.label}: ${c.faultRate > 0 ? `${c.instances} instances, ${durationMs} ms of faults` : `${durationMs} ms of load, no faults`} (seed ${seed})`,
      async () => {
        const deployment = await c.deployment();
        try {
          const report = await runChaos(deployment, {
            seed,
            durationMs,
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
      durationMs + 180_000,
    );
  });
}
