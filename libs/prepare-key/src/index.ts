// The public surface of @ddd-kit/prepare-key. Health indicators are on `/health`, the contract
// suite every backend passes (yours included) on `/testing`.
export { TTL_FOREVER, PreparedValue, toForever, toTtlAt } from './prepared-value.js';
export { PrepareKey } from './prepare-key.js';
// What a backend of your own implements: the factory and the primitives' records.
export { PrepareKeyFactory, type PrepareKeyRestorer } from './prepare-key.factory.js';
export type { PreparedRecord, RecordPage, StoredRecord } from './prepare-key.interfaces.js';

// Declaring and injecting
export { PrepareKeyModule } from './prepare-key.module.js';
export { PreparableKey } from './decorators/preparable-key.decorator.js';
export { InjectPrepareKey } from './decorators/inject-prepare-key.decorator.js';
export { getPrepareKeyToken } from './prepare-key.utils.js';
export type {
  PrepareKeyModuleAsyncOptions,
  PrepareKeyModuleOptions,
  PrepareKeyOptionsFactory,
} from './interfaces/prepare-key-module-options.interface.js';

// Backends
export { MemoryPrepareKeyFactory } from './backends/memory/memory-prepare-key.factory.js';
export type { MemoryPrepareKeyFactoryOptions } from './backends/memory/memory-prepare-key.interfaces.js';
export { RedisPrepareKeyFactory } from './backends/redis/redis-prepare-key.factory.js';
export type { RedisPrepareKeyFactoryOptions } from './backends/redis/redis-prepare-key.interfaces.js';
export { MongoPrepareKeyFactory } from './backends/mongo/mongo-prepare-key.factory.js';
export type { MongoPrepareKeyFactoryOptions } from './backends/mongo/mongo-prepare-key.interfaces.js';
export { PostgresPrepareKeyFactory } from './backends/postgres/postgres-prepare-key.factory.js';
export type { PostgresPrepareKeyFactoryOptions } from './backends/postgres/postgres-prepare-key.interfaces.js';

// Reconciliation
export { reconcileReservations } from './reconciliation/reconcile-reservations.js';
export type {
  ReconcileReservationsOptions,
  ReservationLiveness,
  ReservationPageLiveness,
  ReservationsReconciliationReport,
} from './reconciliation/reconcile-reservations.interfaces.js';

// Errors an application handles at run time (the rest: see errors.ts). A store that does not
// answer in time rejects with OperationTimeoutError, of @ddd-kit/core (every library's).
export {
  PrepareKeyArgumentError,
  PrepareKeyDataLostError,
  PrepareKeyDisabledError,
  PrepareKeyStateError,
} from './errors.js';
