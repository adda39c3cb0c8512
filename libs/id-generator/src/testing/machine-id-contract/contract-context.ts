import { randomUUID } from 'node:crypto';
import { describe, it } from '@jest/globals';
import { MachineIdOverflowError } from '../../errors/machine-id-overflow.error.js';
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
  /** Arms the fault on the next request of `operation` (the one that changes the store); resolves once applied. */
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

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

/** A fault that never fires would leave the case waiting: fail it saying so. */
export function applied(fired: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const missed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the fault was never applied: no request matched it')), 5_000);
  });
  return Promise.race([fired, missed]).finally(() => clearTimeout(timer));
}

export async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

/**
 * A setup step through a faulty store's client, before any fault is armed. That client has a short
 * timeout (so that a lost reply settles), which a busy machine can overrun; the step is asked
 * again, which is safe: distributing to the same instance gives back the ID it already holds.
 */
export async function setUp<T>(step: () => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= tries) throw error;
    }
  }
}
