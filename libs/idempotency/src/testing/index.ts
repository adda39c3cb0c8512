// `@ddd-kit/idempotency/testing`: the contract suite every IdempotencyStore passes, for a store
// of your own (or a configuration of one of ours) to run in Jest.
export {
  describeIdempotencyStoreContract,
  deferredWork,
  type IdempotencyContractOptions,
  type IdempotencyContractTarget,
} from './idempotency.contract.js';
export {
  IDEMPOTENCY_FAULTS,
  type ArmedIdempotencyFault,
  type IdempotencyFault,
  type IdempotencyFaultTarget,
} from './idempotency-faults.contract.js';
