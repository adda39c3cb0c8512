// `@ddd-kit/repository/postgres-wal`: the outbox without a table on PostgreSQL (events as logical
// decoding messages, read back from a replication slot). A subpath of its own so that only
// applications that use it install pg-logical-replication (an optional peer).
export { PostgresWalOutboxStore } from './postgres-wal-outbox.store.js';
export type { PostgresWalOutboxStoreOptions } from './postgres-wal-outbox.store.js';
