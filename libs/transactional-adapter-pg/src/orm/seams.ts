import {
  PgArgumentError,
  PgTransactionEndedError,
  type OrmTransactionSeam,
  type PgPool,
  type PgQueryable,
} from '@ddd-kit/core/postgres';

/** A pg.Pool, structurally: what the ORM must run on for ddd-kit to share its connections. */
function asPool(candidate: unknown, orm: string, how: string): PgPool {
  const pool = candidate as Partial<PgPool & { idleCount: number }> | null | undefined;
  if (pool == null || typeof pool.connect !== 'function' || typeof pool.query !== 'function' || !('idleCount' in pool))
    throw new PgArgumentError(`${orm}: ddd-kit joins its transactions on node-postgres only: ${how}`);
  return pool as PgPool;
}

/**
 * TypeORM (`type: 'postgres'`), with `@nestjs-cls/transactional-adapter-typeorm`: a transaction
 * is an EntityManager whose query runner holds the pg connection; the pool is the driver's.
 */
export const typeOrm: OrmTransactionSeam = {
  orm: 'TypeORM',
  poolOf: (manager) => {
    const source = (manager as { connection?: { driver?: { master?: unknown } } }).connection;
    return asPool(source?.driver?.master, 'TypeORM', "an initialized DataSource of type 'postgres'");
  },
  connectionOf: (tx) => {
    const runner = (tx as { queryRunner?: { isReleased?: boolean; databaseConnection?: PgQueryable } }).queryRunner;
    if (runner === undefined || runner.isReleased === true || runner.databaseConnection == null)
      throw new PgTransactionEndedError();
    return runner.databaseConnection;
  },
};

/**
 * Drizzle on node-postgres (`drizzle(pool)`), with `@nestjs-cls/transactional-adapter-drizzle-orm`:
 * a transaction's session holds the pg connection it checked out of `db.$client`.
 */
export const drizzleOrm: OrmTransactionSeam = {
  orm: 'Drizzle',
  poolOf: (db) => asPool((db as { $client?: unknown }).$client, 'Drizzle', 'drizzle(pool) with a pg.Pool'),
  connectionOf: (tx) => {
    const client = (tx as { session?: { client?: PgQueryable } }).session?.client;
    if (client == null) throw new PgTransactionEndedError();
    return client;
  },
};
