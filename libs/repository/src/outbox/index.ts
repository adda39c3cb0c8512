// `@ddd-kit/repository/outbox`: durable data-sync events. RepositoryModule.forRoot({ outbox })
// wires all of it; this entry is for the relay's operators (status, dead letters), for handlers
// that refuse a retry (NonRetryableError), for
// relays and stores built by hand, and for backends that bring an outbox store of their own.
export type {
  OutboxClaim,
  OutboxClaimRequest,
  OutboxDeadLetterFilter,
  OutboxDeadLetterQuery,
  OutboxFailure,
  OutboxFailureOutcome,
  OutboxLocalRelay,
  OutboxRecord,
  OutboxSlotStatus,
  OutboxStatus,
  OutboxStore,
} from './outbox.interfaces.js';
export { OutboxRelay } from './outbox-relay.js';
export { NonRetryableError } from '../errors.js';
export type { OutboxDelivery, OutboxRelayCounters, OutboxRelayOptions, OutboxRelaySettings } from './outbox-relay.js';
export { InMemoryOutboxStore } from '../backends/memory/in-memory-outbox.store.js';
export { PostgresOutboxStore } from '../backends/postgres/postgres-outbox.store.js';
export type { PostgresOutboxStoreOptions } from '../backends/postgres/postgres-outbox.store.js';
export { MongoOutboxStore } from '../backends/mongoose/mongo-outbox.store.js';
export type { MongoOutboxStoreOptions } from '../backends/mongoose/mongo-outbox.store.js';
export { observeOutboxDeadLetters, recordOutboxLag } from '../telemetry/outbox.telemetry.js';
