// `@ddd-kit/repository`: aggregates, repositories and their backends, RepositoryModule, unique keys.
// Optional concerns have entries of their own: /outbox, /reconciliation, /http, /health, /nats, /testing.

// Aggregates (`@Aggregate` is the declaration @ddd-kit/id-generator reads too: one, from @ddd-kit/core)
export { Aggregate } from '@ddd-kit/core/internal';
export { AggregateRoot } from './aggregate/aggregate-root.js';
export type { AggregateId } from './aggregate/aggregate.interfaces.js';
export { getAggregateName } from './aggregate/aggregate-name.utils.js';

// Data-sync events
export { DataSyncEvent, DataSyncEventType } from './data-sync/data-sync-event.js';
export type { DataSyncPublisher } from './data-sync/data-sync.interfaces.js';
export { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';

// Repositories (AggregatePage and LoadedAggregate: what a subclass's doFindById / doListPage return)
export type {
  AggregatePage,
  IRepository,
  LoadedAggregate,
  RepositoryOptions,
  WriteOptions,
} from './repository/repository.interfaces.js';
export { AbstractRepository } from './repository/abstract-repository.js';
export { retryOnConflict } from './repository/retry-on-conflict.js';
export { InMemoryRepository } from './backends/memory/in-memory.repository.js';
export { MongooseRepository } from './backends/mongoose/mongoose.repository.js';
export type { MongooseRepositoryOptions, StoredDocument } from './backends/mongoose/mongoose.repository.js';
export { PostgresRepository } from './backends/postgres/postgres.repository.js';
export type { PostgresRepositoryOptions } from './backends/postgres/postgres-repository.options.js';
// The statements a PostgresRepository subclass commits with its write (statementsToCommitWith).
export type {
  PostgresColumns,
  PostgresStatement,
  PostgresWriteOperation,
  StoredRow,
} from './backends/postgres/postgres-repository.statements.js';

// Backends (plug-ins of RepositoryModule)
export type { RepositoryBackend, RepositoryBackendContext } from './backends/repository-backend.interface.js';

// Unique keys declared on the aggregate
export { UniqueKey } from './unique-keys/unique-key.decorator.js';
export type { UniqueKeyOwner } from './unique-keys/unique-key.interfaces.js';
export { reconcileUniqueKeys } from './unique-keys/reconcile-unique-keys.js';
export type {
  ReconcileUniqueKeysOptions,
  UniqueKeysReconciliationReport,
} from './unique-keys/reconcile-unique-keys.js';

// Errors an application handles at run time (the rest: see errors.ts)
export {
  AggregateStateError,
  DuplicateAggregateError,
  InvalidAggregateIdError,
  MissingIdGeneratorError,
  OptimisticLockError,
  RepositoryConfigurationError,
  RepositoryError,
  UniqueKeyViolationError,
} from './errors.js';

// Nest module
export { RepositoryModule } from './repository.module.js';
export type { RepositoryFeature } from './interfaces/repository-feature.interface.js';
export type {
  RepositoryModuleAsyncOptions,
  RepositoryModuleOptions,
} from './interfaces/repository-module-options.interface.js';
export type { RepositoryOutboxOptions } from './outbox/outbox.options.js';
export { getRepositoryPoolToken, getRepositoryToken } from './repository.utils.js';
export { InjectRepository } from './decorators/inject-repository.decorator.js';
export { OnDataSync } from './decorators/on-data-sync.decorator.js';
