import { randomUUID } from 'node:crypto';
import { setImmediate } from 'node:timers';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from '@jest/globals';
import { MachineIdOverflowError } from '../../errors.js';
import type { LeasedMachineIdDistributorOptions } from '../../machine/leased-machine-id-distributor.js';
import type { MachineIdDistributor, MachineIdRequest, MachineIdState } from '../../machine/machine-id-distributor.js';

/** A distributor with the lease settings every store-backed one has. */
export type LeasedDistributor = MachineIdDistributor & {
  readonly safeGuardMs: number;
  readonly guardIntervalMs: number;
};

export type Operation = 'distribute' | 'guard' | 'revert';
/**
 * `lost-then-resent`: the store acted, the reply was lost and the same request reached the store
 * again (ioredis resends after a reconnect; the proxy duplicates it for PostgreSQL).
 * `lost`: the store acted, the reply was lost and nothing was resent. `timeout`: the client gave
 * up while the store was acting.
 */
export type FaultKind = 'lost-then-resent' | 'lost' | 'timeout';

/** A client of the store through fault proxies (one per server), set up for one kind of fault. */
export interface FaultyStore {
  create(options?: LeasedMachineIdDistributorOptions): LeasedDistributor;
  /**
   * Arms the fault on the next request of `operation` (the one that changes the store); resolves
   * once applied, which is by the time the operation it hits has settled (the cases check then).
   */
  inject(operation: Operation): Promise<void>;
  /** Nothing passes until `heal()` (a pause, a partition). */
  blackhole(): void;
  /** Ends the blackhole and resets every connection. */
  heal(): void;
  close(): Promise<void>;
}

/** What a store hands the contract. */
export interface DistributorContractTarget {
  create(options?: LeasedMachineIdDistributorOptions): LeasedDistributor;
  faulty(kind: FaultKind): Promise<FaultyStore>;
  /** Read-only views of the store's state, straight from the server. */
  owner(namespace: string, machineId: number): Promise<string | null>;
  heldBy(namespace: string, instanceId: string): Promise<number[]>;
  released(namespace: string): Promise<number[]>;
  /** The holder's deadline by the store's clock (epoch ms), null when not held. */
  deadline(namespace: string, machineId: number): Promise<number | null>;
  /** The timestamp the next holder of the ID starts after. */
  floor(namespace: string, machineId: number): Promise<number>;
  cleanup(namespace: string): Promise<void>;
  close(): Promise<void>;
}

export interface MachineIdDistributorContractOptions {
  /** Run the cases that need `faulty` (default true); false for a store without a fault injector. */
  faults?: boolean;
}

export const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * A holder's two clocks (its wall clock and its lease's monotonic clock), moved only by the
 * case: `advance(ms)` is time passing. A lease counted on them ends exactly when the case says,
 * however slowly the machine runs; heartbeats still go out on their real timer. Give
 * MachineIdHolder.acquire `{ clock: now, monotonic }`, and its distributor and generators `now`.
 */
export class ManualClocks {
  wallMs: number;
  monotonicMs = 0;
  constructor(start = Date.now()) {
    this.wallMs = start;
  }
  readonly now = (): number => this.wallMs;
  readonly monotonic = (): number => this.monotonicMs;
  /** `{ clock, monotonic }` for MachineIdHolder.acquire. */
  get holderClocks(): { clock: () => number; monotonic: () => number } {
    return { clock: this.now, monotonic: this.monotonic };
  }
  advance(ms: number): void {
    this.wallMs += ms;
    this.monotonicMs += ms;
  }
}

/** A clock that reads `readings` in turn (the last one for ever after), counting its reads. */
export class ScriptedClock {
  reads = 0;
  constructor(private readonly readings: number[]) {}
  readonly now = (): number => this.readings[Math.min(this.reads++, this.readings.length - 1)];
}

/**
 * Watches a distributor's heartbeats: `sentSince(t)` resolves once a guard sent when the
 * clocks' monotonic reading was `t` or later has succeeded (a heartbeat that can renew a lease
 * from after the case moved the clocks).
 */
export function heartbeatsOf(
  distributor: MachineIdDistributor,
  clocks: ManualClocks,
): { count(): number; sentSince(monotonicMs: number): Promise<void> } {
  const succeeded: number[] = [];
  const waiting: Array<{ from: number; resolve: () => void }> = [];
  const guard = distributor.guard.bind(distributor);
  distributor.guard = async (state) => {
    const sentAt = clocks.monotonic();
    await guard(state);
    succeeded.push(sentAt);
    // After the holder has taken the answer in (it renews its lease once this call returns).
    setImmediate(() => {
      for (const w of [...waiting]) {
        if (sentAt < w.from) continue;
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    });
  };
  return {
    count: () => succeeded.length,
    sentSince: (from) =>
      succeeded.some((sentAt) => sentAt >= from)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ from, resolve })),
  };
}

/** What every group of cases uses: the store's target once set up, namespaces and request builders. */
export interface MachineIdContractContext {
  target(): DistributorContractTarget;
  /** A fresh namespace, with characters that must not break key syntax or SQL. */
  ns(): string;
  request(namespace: string, machineBits: number, instanceId: string): MachineIdRequest;
  state(
    namespace: string,
    machineBits: number,
    instanceId: string,
    machineId: number,
    lastTimestamp?: number,
  ): MachineIdState;
  /** Distributes until an ID is free (MachineIdOverflowError meanwhile); returns it and the refusals. */
  distributeWhenFree(
    distributor: MachineIdDistributor,
    req: MachineIdRequest,
    limitMs: number,
  ): Promise<{
    taken: Awaited<ReturnType<MachineIdDistributor['distribute']>> | undefined;
    refusals: number;
    at: number;
  }>;
  /** `it` / `describe` for the cases that need the store's fault injector (skipped without it). */
  faultIt: typeof it | typeof it.skip;
  faultDescribe: typeof describe | typeof describe.skip;
}

export function machineIdContractContext(
  target: () => DistributorContractTarget,
  namespaces: string[],
  withFaults: boolean,
): MachineIdContractContext {
  const run = randomUUID().slice(0, 8);
  let sequence = 0;
  return {
    target,
    ns: () => {
      const namespace = `mdc_${run}_${++sequence}:{tag}%é'"`;
      namespaces.push(namespace);
      return namespace;
    },
    request: (namespace, machineBits, instanceId) => ({ namespace, machineBits, instanceId }),
    state: (namespace, machineBits, instanceId, machineId, lastTimestamp = Date.now()) => ({
      namespace,
      machineBits,
      instanceId,
      machineId,
      lastTimestamp,
    }),
    distributeWhenFree: async (distributor, req, limitMs) => {
      const started = Date.now();
      let refusals = 0;
      for (;;) {
        try {
          return { taken: await distributor.distribute(req), refusals, at: Date.now() };
        } catch (error) {
          if (!(error instanceof MachineIdOverflowError)) throw error;
          refusals++;
          if (Date.now() - started > limitMs) return { taken: undefined, refusals, at: Date.now() };
          await sleep(25);
        }
      }
    },
    faultIt: withFaults ? it : it.skip,
    faultDescribe: withFaults ? describe : describe.skip,
  };
}

/**
 * Fails unless the armed fault was applied. A fault fires as its request passes the proxy,
 * before the operation can settle: by the time it has, `fired` has resolved (one turn of the
 * event loop lets its callbacks run). No timer: nothing here depends on how fast the machine is.
 */
export async function expectApplied(fired: Promise<void>): Promise<void> {
  let applied = false;
  void fired.then(() => {
    applied = true;
  });
  await nextTurn();
  if (!applied) throw new Error('the fault was never applied: no request matched it');
}

export async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}
