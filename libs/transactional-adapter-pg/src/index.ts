export { TransactionalAdapterPg } from './transactional-adapter-pg.js';
export type { PgTransactionClient, TransactionalAdapterPgOptions } from './transactional-adapter-pg.js';
export { runInTransaction } from './run-in-transaction.js';
export type { RunInTransactionOptions } from './run-in-transaction.js';
