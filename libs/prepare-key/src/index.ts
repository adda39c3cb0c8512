export { TTL_FOREVER, PreparedValue, toForever, toTtlAt } from './prepared-value.js';
export { PrepareKey } from './prepare-key.js';
export { PrepareKeyFactory } from './prepare-key.factory.js';
export type { PreparedRecord, RecordPage, StoredRecord } from './prepare-key.interfaces.js';
export { canonicalJson } from './canonical-json.js';
export { MAX_KEY_LENGTH } from './prepare-key.validation.js';
export { PrepareKeyArgumentError } from './errors/prepare-key-argument.error.js';
export { PrepareKeyStateError } from './errors/prepare-key-state.error.js';
export { MemoryPrepareKeyFactory } from './backends/memory/memory-prepare-key.factory.js';
export type { MemoryPrepareKeyFactoryOptions } from './backends/memory/memory-prepare-key.interfaces.js';
export { RedisPrepareKeyFactory } from './backends/redis/redis-prepare-key.factory.js';
export type { RedisPrepareKeyFactoryOptions } from './backends/redis/redis-prepare-key.interfaces.js';
export { MongoPrepareKeyFactory } from './backends/mongo/mongo-prepare-key.factory.js';
export type { MongoPrepareKeyFactoryOptions } from './backends/mongo/mongo-prepare-key.interfaces.js';
export { reconcileReservations } from './reconciliation/reconcile-reservations.js';
export type {
  ReconcileReservationsOptions,
  ReconciliationReport,
  ReservationLiveness,
} from './reconciliation/reconcile-reservations.interfaces.js';
