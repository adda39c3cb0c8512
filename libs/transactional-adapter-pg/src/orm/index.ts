// `@ddd-kit/transactional-adapter-pg/orm`: ddd-kit's PostgreSQL parts in an ORM's transactions,
// opened by @nestjs-cls/transactional's own adapter for that ORM.
export { getOrmPoolToken, OrmTransactionsModule, type OrmTransactionsOptions } from './orm-transactions.module.js';
export { drizzleOrm, typeOrm } from './seams.js';
