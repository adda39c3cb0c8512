// Aggregates
export { AggregateRoot, NEW_AGGREGATE_VERSION } from './aggregate/aggregate-root.js';
export type { AggregateClass, AggregateId } from './aggregate/aggregate.interfaces.js';
export { isEmptyId, MAX_ID_LENGTH } from './aggregate/aggregate-id.utils.js';
export { getAggregateName, getQualifiedAggregateName } from './aggregate/aggregate-name.utils.js';

// Data-sync events
export { DataSyncEvent, DataSyncEventType } from './data-sync/data-sync-event.js';
export type { PurgeDataSyncEvent, UpsertDataSyncEvent } from './data-sync/data-sync-event.js';
export type { DataSyncHandler, DataSyncPublisher } from './data-sync/data-sync.interfaces.js';
export { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
export type { DataSyncEventBusOptions } from './data-sync/data-sync-event-bus.js';

// Durable data-sync events (transactional outbox)
export type {
  OutboxClaim,
  OutboxClaimRequest,
  OutboxDeadLetterQuery,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxRecord,
  OutboxStatus,
  OutboxStore,
} from './outbox/outbox.interfaces.js';
export { InMemoryOutboxStore } from './backends/memory/in-memory-outbox.store.js';
export { PostgresOutboxStore } from './backends/postgres/postgres-outbox.store.js';
export type { PostgresOutboxStoreOptions } from './backends/postgres/postgres-outbox.store.js';
export { OutboxRelay } from './outbox/outbox-relay.js';
export type {
  OutboxDelivery,
  OutboxRelayCounters,
  OutboxRelayOptions,
  OutboxRelaySettings,
} from './outbox/outbox-relay.js';

// Repositories
export type {
  AggregateIdGeneratorSource,
  AggregatePage,
  IRepository,
  LoadedAggregate,
  RepositoryOptions,
} from './repository/repository.interfaces.js';
export { AbstractRepository } from './repository/abstract-repository.js';
export { retryOnConflict } from './repository/retry-on-conflict.js';
export type { RetryOnConflictOptions } from './repository/retry-on-conflict.js';
export { InMemoryRepository } from './backends/memory/in-memory.repository.js';
export { MongooseRepository } from './backends/mongoose/mongoose.repository.js';
export type { MongooseRepositoryOptions, StoredDocument } from './backends/mongoose/mongoose.repository.js';
export { MongoOutboxStore } from './backends/mongoose/mongo-outbox.store.js';
export type { MongoOutboxStoreOptions } from './backends/mongoose/mongo-outbox.store.js';
export { PostgresRepository } from './backends/postgres/postgres.repository.js';
export type {
  PostgresColumns,
  PostgresIdType,
  PostgresRepositoryOptions,
  PostgresStatement,
  PostgresWriteOperation,
  StoredRow,
} from './backends/postgres/postgres.repository.js';

// Unique keys declared on the aggregate
export { UniqueKey, getUniqueKeys } from './unique-keys/unique-key.decorator.js';
export type {
  UniqueKeyDefinition,
  UniqueKeyOwner,
  UniqueKeyReservations,
  UniqueKeyResolver,
  UniqueKeyValue,
} from './unique-keys/unique-key.interfaces.js';
export { reconcileUniqueKeys } from './unique-keys/reconcile-unique-keys.js';
export type {
  ReconcileUniqueKeysOptions,
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

// HTTP (optional)
export { DddKitExceptionFilter, dddKitHttpStatus } from './http/ddd-kit-exception.filter.js';

// Nest module
export { RepositoryModule } from './repository.module.js';
export type {
  RepositoryFeature,
  RepositoryFeatureOptions,
  RepositoryModuleAsyncOptions,
  RepositoryModuleOptions,
  RepositoryOptionsFactory,
  RepositoryOutboxOptions,
  RepositoryPostgresOptions,
} from './interfaces/repository-module-options.interface.js';
export { getRepositoryPoolToken, getRepositoryToken } from './repository.utils.js';
export { InjectRepository } from './decorators/inject-repository.decorator.js';
export { OnDataSync } from './decorators/on-data-sync.decorator.js';

// Telemetry (for an outbox relay; the repository reports its own writes)
export { recordOutboxLag } from './telemetry/outbox.telemetry.js';

// Reconciliation
export type { ReadReplica, ReplicaEntry, ReplicaPage } from './reconciliation/read-replica.interfaces.js';
export { checkReplicaEntry, classifyReplicaEntry, ReplicaEntryStatus } from './reconciliation/replica-entry-status.js';
export type { ReplicaEntryCheck } from './reconciliation/replica-entry-status.js';
export { ReadReplicaReconciler } from './reconciliation/read-replica.reconciler.js';
export type { ReadReplicaReconcilerOptions, ReconciliationReport } from './reconciliation/read-replica.reconciler.js';
export { InMemoryReadReplica } from './reconciliation/in-memory-read-replica.js';
export type { ReplicaRecord } from './reconciliation/in-memory-read-replica.js';
