// The public surface of @ddd-kit/id-generator. Health indicators are on `/health`, the contract
// suite of a MachineIdDistributor on `/testing`. Options types not named here are the
// constructors' parameters (`ConstructorParameters<typeof SnowflakeId>[0]`).
export type { AsyncIdGenerator, IdGenerator, IdState } from './id-generator.interfaces.js';

// Generators
export { SnowflakeId } from './generators/snowflake-id.js';
export { SafeJsSnowflakeId } from './generators/safe-js-snowflake-id.js';
export { CosIdGenerator } from './generators/cosid-generator.js';
export { NanoIdGenerator } from './generators/nanoid-generator.js';
export { SegmentId } from './generators/segment-id.js';
export { RedisSegmentSource, type SegmentSource } from './generators/segment/segment-source.js';
export { PostgresSegmentSource } from './generators/segment/postgres-segment-source.js';
export { ClockSync } from './clock/clock-sync.js';
export { Radix62 } from './radix62/radix62.js';

// Machine IDs
export {
  MachineIdDistributor,
  type MachineIdDistribution,
  type MachineIdRequest,
  type MachineIdState,
} from './machine/machine-id-distributor.js';
export { ManualMachineIdDistributor } from './machine/manual-machine-id-distributor.js';
export { StatefulSetMachineIdDistributor } from './machine/stateful-set-machine-id-distributor.js';
export { RedisMachineIdDistributor } from './machine/redis/redis-machine-id-distributor.js';
export { PostgresMachineIdDistributor } from './machine/postgres/postgres-machine-id-distributor.js';
// The held machine ID of IdGeneratorModule (a provider: the health indicator reads it, a test may override it).
export { MachineIdHolder } from './machine/machine-id-holder.js';

// Nest module
export { IdGeneratorModule } from './module/id-generator.module.js';
export type {
  IdGeneratorContext,
  IdGeneratorModuleAsyncOptions,
  IdGeneratorModuleOptions,
} from './module/id-generator-options.interface.js';
export { getIdGeneratorToken } from './module/id-generator.utils.js';
export { InjectIdGenerator } from './module/inject-id-generator.decorator.js';

// Global IDs
export { GlobalIdGenerator } from './global/global-id-generator.js';
export {
  generateGlobalId,
  generateGlobalIdAsync,
  generateId,
  generateIdAsync,
} from './global/id-generator.registry.js';

// Aggregate IDs (the declaration is shared with @ddd-kit/repository through @ddd-kit/core)
export { Aggregate, type NamedAggregate } from '@ddd-kit/core/internal';
export { AggregateIdGeneratorFactory } from './aggregate/aggregate-id-generator-factory.js';
export { AggregateIdGeneratorRegistrar } from './aggregate/aggregate-id-generator-registrar.js';
export { Order } from './aggregate/order.decorator.js';

// Errors an application handles at run time (the rest: see errors.ts)
export {
  ClockBackwardsError,
  IdGeneratorError,
  InvalidIdError,
  MachineIdLeaseExpiredError,
  MachineIdLostError,
  MachineIdOverflowError,
  MachineIdReleasedError,
  MachineIdStoreError,
  NotInitializedGlobalIdGeneratorError,
  SegmentExhaustedError,
} from './errors.js';
