/** The validated RepositoryModule options. */
export const REPOSITORY_MODULE_OPTIONS = Symbol('ddd-kit:repository-module-options');
/** `{ connection, owned }`: the Mongoose connection MongooseRepository subclasses use, if any. */
export const REPOSITORY_CONNECTION = Symbol('ddd-kit:repository-connection');
/** `{ pool, owned, createTables }`: the pg.Pool PostgresRepository subclasses use, if any. */
export const REPOSITORY_POSTGRES = Symbol('ddd-kit:repository-postgres');
/** The pg.Pool itself (null without PostgreSQL), public through getRepositoryPoolToken(). */
export const REPOSITORY_POSTGRES_POOL = Symbol('ddd-kit:repository-postgres-pool');
/** Metadata key of `@OnDataSync` on a handler method: the aggregate classes it listens to. */
export const ON_DATA_SYNC_METADATA = 'ddd-kit:on-data-sync';
/** `{ memory, postgres }`: the outbox stores repositories write their events to, or null when the outbox is off. */
export const REPOSITORY_OUTBOX_STORES = Symbol('ddd-kit:repository-outbox-stores');
