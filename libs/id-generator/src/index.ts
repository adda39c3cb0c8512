// The public surface of @ddd-kit/id-generator.
export type {
  AsyncIdGenerator,
  Clock,
  ClockLike,
  IdGenerator,
  IdState,
  MachineIdLeaseLike,
  TimeBasedGeneratorOptions,
  TimeBasedIdGenerator,
} from './id-generator.interfaces.js';

// Generators
export { SnowflakeId } from './generators/snowflake-id.js';
export { SafeJsSnowflakeId } from './generators/safe-js-snowflake-id.js';
export {
  SNOWFLAKE_DEFAULT_EPOCH,
  type SnowflakeFormat,
  type SnowflakeIdOptions,
} from './generators/snowflake.options.js';
export { CosIdGenerator } from './generators/cosid-generator.js';
export { NanoIdGenerator, type NanoIdGeneratorOptions } from './generators/nanoid-generator.js';
export { AsyncIdGeneratorAdapter, toAsyncIdGenerator } from './generators/async-id-generator.js';
export { SegmentId, type SegmentIdOptions } from './generators/segment-id.js';
export {
  RedisSegmentSource,
  type RedisSegmentSourceOptions,
  type SegmentSource,
} from './generators/segment/segment-source.js';
export {
  PostgresSegmentSource,
  type PostgresSegmentSourceOptions,
} from './generators/segment/postgres-segment-source.js';
export { ClockSync, type ClockSyncOptions } from './clock/clock-sync.js';
export { Radix62, RADIX62_ALPHABET } from './radix62/radix62.js';

// Machine IDs
export {
  MachineIdDistributor,
  type MachineIdDistribution,
  type MachineIdRequest,
  type MachineIdState,
} from './machine/machine-id-distributor.js';
export { ManualMachineIdDistributor } from './machine/manual-machine-id-distributor.js';
export {
  StatefulSetMachineIdDistributor,
  type StatefulSetMachineIdDistributorOptions,
} from './machine/stateful-set-machine-id-distributor.js';
export {
  RedisMachineIdDistributor,
  type MachineIdKeys,
  type RedisMachineIdDistributorOptions,
} from './machine/redis/redis-machine-id-distributor.js';
export {
  PostgresMachineIdDistributor,
  type PostgresMachineIdDistributorOptions,
} from './machine/postgres/postgres-machine-id-distributor.js';
export type { LeasedMachineIdDistributorOptions } from './machine/leased-machine-id-distributor.js';
export type { PgPool, PgPoolClient, PgResult } from './pg/pg.utils.js';
export { MachineIdHolder, type HeldMachineId, type MachineIdHolderOptions } from './machine/machine-id-holder.js';
export { MachineIdLease, type LeaseInstant, type MachineIdLeaseClocks } from './machine/machine-id-lease.js';

// Nest module
export { IdGeneratorModule } from './module/id-generator.module.js';
export type {
  IdGeneratorContext,
  IdGeneratorDefinition,
  IdGeneratorModuleAsyncOptions,
  IdGeneratorModuleForRootOptions,
  IdGeneratorModuleOptions,
  IdGeneratorOptionsFactory,
  MachineIdStoreOptions,
  RedisMachineIdStoreOptions,
} from './module/id-generator-options.interface.js';
export type { RedisConnectionOptions } from '@ddd-kit/core/redis';
export { getIdGeneratorContextToken, getIdGeneratorToken } from './module/id-generator.utils.js';
export { InjectIdGenerator, InjectIdGeneratorContext } from './module/inject-id-generator.decorator.js';

// Global IDs
export { GlobalIdGenerator } from './global/global-id-generator.js';
export {
  generateGlobalId,
  generateGlobalIdAsync,
  generateId,
  generateIdAsync,
} from './global/id-generator.registry.js';

// Aggregate IDs
// The aggregate declaration is shared with @ddd-kit/repository through @ddd-kit/core.
export {
  Aggregate,
  AggregateDeclarationError,
  DEFAULT_CONTEXT_NAME,
  getAggregateMetadata,
  isNamedAggregate,
  type AggregateMetadata,
  type AggregateOptions,
  type NamedAggregate,
} from '@ddd-kit/core/internal';
export { getNamedAggregate } from './aggregate/named-aggregate.utils.js';
export { AggregateIdGeneratorFactory } from './aggregate/aggregate-id-generator-factory.js';
export { AggregateIdGeneratorRegistrar } from './aggregate/aggregate-id-generator-registrar.js';
export { CosIdAggregateIdGeneratorFactory } from './aggregate/cosid-aggregate-id-generator-factory.js';
export { Order, getOrder, DEFAULT_ORDER } from './aggregate/order.decorator.js';

// Errors
export { IdGeneratorError } from './errors/id-generator.error.js';
export { IdGeneratorOptionsError } from './errors/id-generator-options.error.js';
export { MachineIdStoreError } from './errors/machine-id-store.error.js';
export { ClockBackwardsError } from './errors/clock-backwards.error.js';
export { ClockStalledError } from './errors/clock-stalled.error.js';
export { InvalidClockReadingError } from './errors/invalid-clock-reading.error.js';
export { TimestampOverflowError } from './errors/timestamp-overflow.error.js';
export { InvalidIdError } from './errors/invalid-id.error.js';
export { MachineIdOverflowError } from './errors/machine-id-overflow.error.js';
export { MachineIdLostError } from './errors/machine-id-lost.error.js';
export { MachineIdLeaseExpiredError } from './errors/machine-id-lease-expired.error.js';
export { MachineIdReleasedError } from './errors/machine-id-released.error.js';
export { NotInitializedGlobalIdGeneratorError } from './errors/not-initialized-global-id-generator.error.js';
export { NotInitializedAggregateIdGeneratorError } from './errors/not-initialized-aggregate-id-generator.error.js';
export { AggregateNotDecoratedError } from './errors/aggregate-not-decorated.error.js';
export { UnknownIdGeneratorError } from './errors/unknown-id-generator.error.js';
export { SegmentExhaustedError } from './errors/segment-exhausted.error.js';

// A store that did not answer within the operation deadline (operationTimeoutMs), for every ddd-kit library.
export { OperationTimeoutError } from '@ddd-kit/core';
