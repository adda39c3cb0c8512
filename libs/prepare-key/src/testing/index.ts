export { describePrepareKeyContract } from './prepare-key.contract.js';
export type { PrepareKeyContractTarget } from './prepare-key.contract.js';
