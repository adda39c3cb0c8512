// The contract every store-backed MachineIdDistributor passes (Redis, Redis Cluster,
// PostgreSQL, and yours): the same cases, run against each through a small adapter. They cover
// the steps, holder-owned leases, the MachineIdHolder on the store, and faults between client and
// store (through a fault injector the adapter provides).
import { afterAll, beforeAll, describe } from '@jest/globals';
import {
  machineIdContractContext,
  type DistributorContractTarget,
  type MachineIdDistributorContractOptions,
} from './machine-id-contract/contract-context.js';
import { describeFaultCases } from './machine-id-contract/faults.cases.js';
import { describeHolderCases } from './machine-id-contract/holder.cases.js';
import { describeLeaseCases } from './machine-id-contract/leases.cases.js';
import { describeStepCases } from './machine-id-contract/steps.cases.js';

export type {
  DistributorContractTarget,
  FaultKind,
  FaultyStore,
  LeasedDistributor,
  MachineIdDistributorContractOptions,
  Operation,
} from './machine-id-contract/contract-context.js';

/**
 * Defines the cases for one store. `setup` runs once (beforeAll), `close` once (afterAll); every
 * case works in a namespace of its own (cleaned up afterwards), so the suite can share a server.
 *
 * ```ts
 * describeMachineIdDistributorContract('my store', async () => myStoreTarget(), { faults: false });
 * ```
 */
export function describeMachineIdDistributorContract(
  label: string,
  setup: () => Promise<DistributorContractTarget>,
  options: MachineIdDistributorContractOptions = {},
): void {
  describe(`MachineIdDistributor contract: ${label}`, () => {
    let target: DistributorContractTarget | undefined;
    const namespaces: string[] = [];
    const context = machineIdContractContext(
      () => {
        if (target === undefined)
          throw new Error(`describeMachineIdDistributorContract('${label}'): setup returned no target`);
        return target;
      },
      namespaces,
      options.faults ?? true,
    );

    beforeAll(async () => {
      target = await setup();
    });

    afterAll(async () => {
      for (const ns of namespaces) await target?.cleanup(ns);
      await target?.close();
    });

    describeStepCases(context);
    describeLeaseCases(context);
    describeHolderCases(context);
    describeFaultCases(context);
  });
}
