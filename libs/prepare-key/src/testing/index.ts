export { describePrepareKeyContract } from './prepare-key.contract.js';
export type { PrepareKeyContractOptions, PrepareKeyContractTarget } from './prepare-key.contract.js';
export type { PrepareKeyContractClock } from './contract/contract-context.js';
export { PREPARE_KEY_FAULTS } from './prepare-key-faults.contract.js';
export type { ArmedFault, PrepareKeyFault, PrepareKeyFaultTarget } from './prepare-key-faults.contract.js';
