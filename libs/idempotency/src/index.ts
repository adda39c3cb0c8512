// `@ddd-kit/idempotency`: a request ID recognises a repeated command request and replays the
// first result. The contract suite is on `@ddd-kit/idempotency/testing`.
export type { IdempotencyOutcome, IdempotencyRequest, IdempotencyStore } from './idempotency.interfaces.js';
export { MAX_KEY_LENGTH } from './idempotency.validation.js';
export { IdempotencyConflictError } from './errors/idempotency-conflict.error.js';
export { IdempotencyInProgressError } from './errors/idempotency-in-progress.error.js';
export { IdempotencyArgumentError } from './errors/idempotency-argument.error.js';
export { IdempotencyResultUnreadableError } from './errors/idempotency-result-unreadable.error.js';
export {
  MemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
} from './stores/memory/memory-idempotency.store.js';
export {
  DEFAULT_HEADER,
  getIdempotencyStoreToken,
  IdempotencyInterceptor,
  IdempotencyModule,
  Idempotent,
  InjectIdempotencyStore,
  parseIdempotencyKey,
  REPLAYED_HEADER,
  type IdempotencyModuleAsyncOptions,
  type IdempotencyModuleOptions,
  type IdempotentOptions,
  type IdempotentRequest,
} from './http/index.js';
export { RedisIdempotencyStore, type RedisIdempotencyStoreOptions } from './stores/redis/redis-idempotency.store.js';
export { PostgresIdempotencyStore } from './stores/postgres/postgres-idempotency.store.js';
export type { PostgresIdempotencyStoreOptions } from './stores/postgres/postgres-idempotency.interfaces.js';
export { inbox, inboxKey, type InboxOptions } from './inbox/inbox.js';
export {
  handleJetStreamMessage,
  type InboxJetStreamMessage,
  type JetStreamInboxOptions,
  type JetStreamInboxOutcome,
} from './inbox/jetstream-inbox.js';

// A store that did not answer within the operation deadline (operationTimeoutMs), for every ddd-kit library.
export { OperationTimeoutError } from '@ddd-kit/core';
