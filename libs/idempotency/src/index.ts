// `@ddd-kit/idempotency`: a request ID recognises a repeated command request and replays the
// first result. The contract suite is on `@ddd-kit/idempotency/testing`. A store that does not
// answer in time rejects with OperationTimeoutError, of @ddd-kit/core (every library's).
export type { IdempotencyOutcome, IdempotencyRequest, IdempotencyStore } from './idempotency.interfaces.js';
export {
  IdempotencyArgumentError,
  IdempotencyConflictError,
  IdempotencyInProgressError,
  IdempotencyResultUnreadableError,
} from './errors.js';

// Stores
export {
  MemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
} from './stores/memory/memory-idempotency.store.js';
export { RedisIdempotencyStore, type RedisIdempotencyStoreOptions } from './stores/redis/redis-idempotency.store.js';
export { PostgresIdempotencyStore } from './stores/postgres/postgres-idempotency.store.js';
export type { PostgresIdempotencyStoreOptions } from './stores/postgres/postgres-idempotency.interfaces.js';

// HTTP: the module and @Idempotent
export { IdempotencyModule } from './http/idempotency.module.js';
export { Idempotent } from './http/idempotent.decorator.js';
export { getIdempotencyStoreToken, InjectIdempotencyStore } from './http/inject-idempotency-store.decorator.js';
export type {
  IdempotencyModuleAsyncOptions,
  IdempotencyModuleOptions,
  IdempotentOptions,
  IdempotentRequest,
} from './http/idempotency-module-options.interface.js';

// Messages: the inbox
export { inbox, type InboxOptions } from './inbox/inbox.js';
export {
  handleJetStreamMessage,
  type InboxJetStreamMessage,
  type JetStreamInboxOptions,
  type JetStreamInboxOutcome,
} from './inbox/jetstream-inbox.js';
