// `@ddd-kit/repository`: aggregates, repositories and their backends, RepositoryModule, unique keys.
// Optional concerns have entries of their own: /outbox, /reconciliation, /http, /health, /nats, /testing.

// Aggregates
export { AggregateRoot, NEW_AGGREGATE_VERSION, type AggregateClass } from './aggregate/aggregate-root.js';
export type { AggregateId } from './aggregate/aggregate.interfaces.js';
export { isEmptyId, MAX_ID_LENGTH } from './aggregate/aggregate-id.utils.js';
export { getAggregateName, getQualifiedAggregateName } from './aggregate/aggregate-name.utils.js';

// Data-sync events
export { DataSyncEvent, DataSyncEventType } from './data-sync/data-sync-event.js';
export type { PurgeDataSyncEvent, UpsertDataSyncEvent } from './data-sync/data-sync-event.js';
export type { DataSyncHandler, DataSyncPublisher } from './data-sync/data-sync.interfaces.js';
export { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
export type { DataSyncEventBusOptions } from './data-sync/data-sync-event-bus.js';

// Repositories
export type {
  AggregateIdGeneratorSource,
  AggregatePage,
  IRepository,
  LoadedAggregate,
  RepositoryOptions,
  WriteOptions,
} from './repository/repository.interfaces.js';
export { AbstractRepository } from './repository/abstract-repository.js';
export { retryOnConflict } from './repository/retry-on-conflict.js';
export type { RetryOnConflictOptions } from './repository/retry-on-conflict.js';
export { InMemoryRepository } from './backends/memory/in-memory.repository.js';
export { MongooseRepository } from './backends/mongoose/mongoose.repository.js';
export type { MongooseRepositoryOptions, StoredDocument } from './backends/mongoose/mongoose.repository.js';
export { PostgresRepository } from './backends/postgres/postgres.repository.js';
export type { PostgresRepositoryOptions } from './backends/postgres/postgres-repository.options.js';
export type {
  PostgresColumns,
  PostgresIdType,
  PostgresStatement,
  PostgresWriteOperation,
  StoredRow,
} from './backends/postgres/postgres-repository.statements.js';

// Backends (plug-ins of RepositoryModule)
export type {
  AnyRepository,
  RepositoryBackend,
  RepositoryBackendContext,
} from './backends/repository-backend.interface.js';
export type { MongooseBackendOptions } from './backends/mongoose/mongoose.backend-options.js';
export type {
  PostgresBackendOptions,
  RepositoryPostgresOptions,
} from './backends/postgres/postgres.backend-options.js';

// Unique keys declared on the aggregate
export { UniqueKey, getUniqueKeys } from './unique-keys/unique-key.decorator.js';
export type {
  UniqueKeyDefinition,
  UniqueKeyOwner,
  UniqueKeyReservations,
  UniqueKeyResolver,
  UniqueKeyValue,
} from './unique-keys/unique-key.interfaces.js';
export type { UniqueKeyReserver } from './unique-keys/unique-key.reserver.js';
export { reconcileUniqueKeys } from './unique-keys/reconcile-unique-keys.js';
export type {
  ReconcileUniqueKeysOptions,
  UniqueKeyedRepository,
  UniqueKeysReconciliationReport,
} from './unique-keys/reconcile-unique-keys.js';
export { UniqueKeyViolationError } from './errors/unique-key-violation.error.js';

// Errors
export { RepositoryError } from './errors/repository.error.js';
export { OptimisticLockError } from './errors/optimistic-lock.error.js';
export { InvalidAggregateIdError } from './errors/invalid-aggregate-id.error.js';
export { MissingIdGeneratorError } from './errors/missing-id-generator.error.js';
export { DuplicateAggregateError } from './errors/duplicate-aggregate.error.js';
export { AggregateStateError } from './errors/aggregate-state.error.js';
export { RepositoryConfigurationError } from './errors/repository-configuration.error.js';

// Nest module
export { RepositoryModule } from './repository.module.js';
export type { RepositoryFeature, RepositoryFeatureOptions } from './interfaces/repository-feature.interface.js';
export type {
  RepositoryModuleAsyncOptions,
  RepositoryModuleOptions,
  RepositoryOptionsFactory,
} from './interfaces/repository-module-options.interface.js';
export type { RepositoryOutboxOptions } from './outbox/outbox.options.js';
export { getRepositoryPoolToken, getRepositoryToken } from './repository.utils.js';
export { InjectRepository } from './decorators/inject-repository.decorator.js';
export { OnDataSync } from './decorators/on-data-sync.decorator.js';
