// `@ddd-kit/id-generator/testing`: the contract a MachineIdDistributor on a shared store passes,
// yours included. It defines Jest cases: @jest/globals is an optional peer that only this
// entry needs.
export {
  describeMachineIdDistributorContract,
  type DistributorContractTarget,
  type FaultKind,
  type FaultyStore,
  type LeasedDistributor,
  type MachineIdDistributorContractOptions,
  type Operation,
} from './machine-id-distributor.contract.js';
// The clocks the holder cases move by hand, for tests of your own around a holder.
export { heartbeatsOf, ManualClocks } from './machine-id-contract/contract-context.js';
