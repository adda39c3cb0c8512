import { AsyncLocalStorage } from 'node:async_hooks';

/** What runs SQL: a pg Pool, a pool's client, or a Client. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
}

/**
 * The ambient transaction of ddd-kit's PostgreSQL parts. It is shared through one
 * AsyncLocalStorage on a global symbol rather than an import, so that each library stays
 * installable alone; `@ddd-kit/transactional-adapter-pg` (or any code following the same
 * protocol) opens transactions there.
 */
interface AmbientPgTransaction {
  readonly pool: object;
  readonly client: PgQueryable;
  readonly outer?: AmbientPgTransaction;
}

const KEY = Symbol.for('@ddd-kit/pg-ambient-transaction');
const storage: AsyncLocalStorage<AmbientPgTransaction> = ((globalThis as Record<symbol, unknown>)[KEY] ??=
  new AsyncLocalStorage<AmbientPgTransaction>()) as AsyncLocalStorage<AmbientPgTransaction>;

/** The client of the ambient transaction opened on `pool`, or `pool` itself (autocommit). */
export function queryableFor(pool: PgQueryable): PgQueryable {
  for (let t = storage.getStore(); t !== undefined; t = t.outer) if (t.pool === pool) return t.client;
  return pool;
}
