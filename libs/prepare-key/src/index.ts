export { TTL_FOREVER, PreparedValue, toForever, toTtlAt } from './prepared-value.js';
export { PrepareKey } from './prepare-key.js';
export { PrepareKeyFactory, type PrepareKeyRestorer } from './prepare-key.factory.js';
export type { PreparedRecord, RecordPage, StoredRecord } from './prepare-key.interfaces.js';
export { canonicalJson } from './canonical-json.js';
export { MAX_KEY_LENGTH } from './prepare-key.validation.js';
export { PrepareKeyArgumentError } from './errors/prepare-key-argument.error.js';
export { PrepareKeyStateError } from './errors/prepare-key-state.error.js';
export { PrepareKeyDataLostError } from './errors/prepare-key-data-lost.error.js';
export { MemoryPrepareKeyFactory } from './backends/memory/memory-prepare-key.factory.js';
export type { MemoryPrepareKeyFactoryOptions } from './backends/memory/memory-prepare-key.interfaces.js';
export { PrepareKeyModule } from './prepare-key.module.js';
export { PreparableKey } from './decorators/preparable-key.decorator.js';
export { InjectPrepareKey } from './decorators/inject-prepare-key.decorator.js';
export { getPrepareKeyToken } from './prepare-key.utils.js';
export type {
  PreparableKeyMatcher,
  PrepareKeyBackendOptions,
  PrepareKeyFeature,
  PrepareKeyModuleAsyncOptions,
  PrepareKeyModuleOptions,
  PrepareKeyOptionsFactory,
  PrepareKeyRedisOptions,
  PrepareKeyScanOptions,
} from './interfaces/prepare-key-module-options.interface.js';
export type { PrepareKeyClass, PreparableKeyDeclaration } from './interfaces/preparable-key-declaration.interface.js';
export { PrepareKeyDeclarationError } from './errors/prepare-key-declaration.error.js';
export { PrepareKeyDisabledError } from './errors/prepare-key-disabled.error.js';
export { PrepareKeyFactoryMissingError } from './errors/prepare-key-factory-missing.error.js';
export { PrepareKeyModuleOptionsError } from './errors/prepare-key-module-options.error.js';
export { PrepareKeyConnectionError } from './errors/prepare-key-connection.error.js';
export { PrepareKeyNameConflictError } from './errors/prepare-key-name-conflict.error.js';
export { RedisPrepareKeyFactory } from './backends/redis/redis-prepare-key.factory.js';
export type { RedisPrepareKeyFactoryOptions } from './backends/redis/redis-prepare-key.interfaces.js';
export type { RedisConnectionOptions } from '@ddd-kit/core/redis';
export { MongoPrepareKeyFactory } from './backends/mongo/mongo-prepare-key.factory.js';
export type { MongoPrepareKeyFactoryOptions } from './backends/mongo/mongo-prepare-key.interfaces.js';
export { PostgresPrepareKeyFactory } from './backends/postgres/postgres-prepare-key.factory.js';
export type { PostgresPrepareKeyFactoryOptions } from './backends/postgres/postgres-prepare-key.interfaces.js';
export type { PgQueryable } from '@ddd-kit/core/postgres';
export { reconcileReservations } from './reconciliation/reconcile-reservations.js';
export type {
  ReconcileReservationsOptions,
  ReconciliationReport,
  ReservationLiveness,
} from './reconciliation/reconcile-reservations.interfaces.js';

// A store that did not answer within the operation deadline (operationTimeoutMs), for every ddd-kit library.
export { OperationTimeoutError } from '@ddd-kit/core';
