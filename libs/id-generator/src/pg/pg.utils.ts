import {
  assertPool as assertPgPool,
  outsideTransaction,
  PgSchema,
  qualifiedName,
  quoteIdentifier,
  runTransaction,
  type PgPool,
  type PgPoolClient,
  type PgSchemaOptions,
} from '@ddd-kit/core/postgres';
import { IdGeneratorOptionsError } from '../errors.js';

export type { PgPool, PgPoolClient, PgResult } from '@ddd-kit/core/postgres';

const optionsError = (message: string): Error => new IdGeneratorOptionsError(message);

/**
 * Checks `pool` is a node-postgres pg.Pool. The ID sources use only the pool's own connections,
 * never a transaction the caller has open: an ID block or a lease must outlive any rollback.
 */
export function assertPool(pool: unknown, who: string): PgPool {
  try {
    assertPgPool(pool, who);
  } catch (error) {
    throw new IdGeneratorOptionsError(`${(error as Error).message}, not a single client or transaction`);
  }
  return pool;
}

/** `"schema"."<prefix><name>"` (or unqualified: the connection's search_path), every part checked. */
export function tableName(schema: string | undefined, prefix: string, name: string, option: string): string {
  if (typeof prefix !== 'string' || (prefix !== '' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(prefix))) {
    throw new IdGeneratorOptionsError(
      `${option}: tablePrefix must be empty or a plain identifier, got ${JSON.stringify(prefix)}`,
    );
  }
  return qualifiedName(schema, `${prefix}${name}`, option, optionsError);
}

/** An index name derived from the table prefix, checked like a table name. */
export function indexName(prefix: string, name: string, option: string): string {
  return quoteIdentifier(`${prefix}${name}`, `${option}: index`, optionsError);
}

/** The database server's clock as epoch milliseconds (clock_timestamp(): the moment the expression runs). */
export const DB_NOW_MS = 'floor(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * Runs `work` in a short transaction on a connection of its own, never the caller's (see
 * runTransaction for what a failure does to the connection).
 */
export function inOwnTransaction<T>(pool: PgPool, work: (client: PgPoolClient) => Promise<T>): Promise<T> {
  return outsideTransaction(() => runTransaction(pool, undefined, (context) => work(context.guarded), { local: true }));
}

/**
 * The tables of an ID source, created (or, with `create: false`, checked) before its first
 * statement, outside any transaction of the caller's.
 */
export function idSourceSchema(pool: PgPool, options: PgSchemaOptions): () => Promise<void> {
  const schema = new PgSchema(pool, options);
  return () => (schema.ready ? Promise.resolve() : outsideTransaction(() => schema.ensure()));
}
