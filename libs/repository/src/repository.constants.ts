// Internal tokens: symbols named REPOSITORY_<WHAT>, described '@ddd-kit/repository:<what>'.
// Public tokens come from the get*Token() functions of repository.utils.ts.

/** The validated RepositoryModule options. */
export const REPOSITORY_MODULE_OPTIONS = Symbol('@ddd-kit/repository:module-options');
/** The connected backends (RepositoryBackend[]): yours, then the built-in ones the options configure. */
export const REPOSITORY_BACKENDS = Symbol('@ddd-kit/repository:backends');
/** The pg.Pool of the PostgreSQL backend (null without one), public through getRepositoryPoolToken(). */
export const REPOSITORY_POSTGRES_POOL = Symbol('@ddd-kit/repository:postgres-pool');
/** Map<RepositoryBackend, OutboxStore>: each backend's outbox store, or null when the outbox is off. */
export const REPOSITORY_OUTBOX_STORES = Symbol('@ddd-kit/repository:outbox-stores');
/** Metadata key of `@OnDataSync` on a handler method: the aggregate classes it listens to. */
export const ON_DATA_SYNC_METADATA = '@ddd-kit/repository:on-data-sync';
