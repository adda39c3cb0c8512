// `@ddd-kit/core/postgres`: the one PostgreSQL transaction path every ddd-kit part joins, the
// identifier checks and the versioned migrations of their tables (PgSchema, runSchemaCommand).
// Types are structural: nothing here requires `pg`'s own types.
export type { PgPool, PgPoolClient, PgQueryable, PgQueryConfig, PgResult } from './pg.interfaces.js';
export { preparedStatement, usePreparedStatements } from './prepared-statements.js';
export {
  activeTransactionFor,
  ambientTransactions,
  outsideTransaction,
  PgTransactionContext,
  queryableFor,
  type AmbientPgTransaction,
  type QueryableOptions,
} from './ambient-transaction.js';
export {
  assertPool,
  beginStatement,
  runTransaction,
  type PgIsolationLevel,
  type PgTransactionOptions,
  type RunTransactionHooks,
} from './run-transaction.js';
export {
  bareTableName,
  qualifiedName,
  quoteIdentifier,
  quoteTableName,
  type IdentifierFailure,
} from './identifiers.js';
export { collectingSchema, collectSchemaStatements, PgSchema, type PgSchemaOptions, type PgTable } from './schema.js';
export type { PgMigration, PgMigrationPlan, PgPendingMigration } from './migrations.js';
export { runSchemaCommand, schemaCommand, type SchemaCommand } from './schema-command.js';
export { checkPool, companionPool, guardPool, openPool, type OpenPoolOptions } from './pool.js';
export {
  PgArgumentError,
  PgConfigurationError,
  PgConnectionError,
  PgForeignTransactionError,
  PgSchemaMissingError,
  PgTransactionEndedError,
} from '../errors.js';
export { isPostgresUnreachable } from './unreachable-error.js';
export { joinOrmTransactions, type JoinedOrmTransactions, type OrmTransactionSeam } from './orm-transactions.js';
