import { DddKitError, DddKitTypeError } from '../errors/ddd-kit.error.js';

/**
 * A statement issued after the transaction it was started in had ended (a child call not
 * awaited, `TransactionHost.tx` kept beyond the method): refused, so it never runs on a
 * connection that went back to the pool and may now belong to another request.
 */
export class PgTransactionEndedError extends DddKitError {
  override readonly code = 'PG_TRANSACTION_ENDED';

  constructor() {
    super(
      'The PostgreSQL transaction this code was started in has ended (committed or rolled back): work left ' +
        'running after a transaction cannot join it. Await it inside the transaction, or start one of its own.',
    );
  }
}

/**
 * A ddd-kit PostgreSQL part ran inside a transaction started from another pool than its own:
 * its statements would have committed on their own, unnoticed.
 */
export class PgForeignTransactionError extends DddKitError {
  override readonly code = 'PG_FOREIGN_TRANSACTION';
}

/** Invalid configuration of a PostgreSQL part (a table name, a pool that is not one). */
export class PgConfigurationError extends DddKitError {
  override readonly code = 'PG_CONFIGURATION';
}

/** A table a part needs does not exist, and the part was told not to create it. */
export class PgSchemaMissingError extends DddKitError {
  override readonly code = 'PG_SCHEMA_MISSING';
}

/** A bad argument to the transaction path (options that are not transaction options, a pool that is not one). */
export class PgArgumentError extends DddKitTypeError {
  override readonly code = 'PG_ARGUMENT';
}

/** PostgreSQL could not be reached where a part needed it (at start-up: the application does not start). */
export class PgConnectionError extends DddKitError {
  override readonly code = 'PG_CONNECTION';
}
