// Every error class of @ddd-kit/core, in one place: the base every ddd-kit error extends
// (DddKitError, with its stable `code`), and the errors core's own parts throw. Each entry
// exports the ones its users meet: the base and OperationTimeoutError from `@ddd-kit/core`, the
// PostgreSQL ones from `@ddd-kit/core/postgres`.

const BRAND = Symbol.for('@ddd-kit/error');

interface Branded {
  readonly [BRAND]?: true;
  readonly code?: unknown;
}

function isBranded(value: unknown): value is DddKitError {
  return typeof value === 'object' && value !== null && (value as Branded)[BRAND] === true;
}

/**
 * The base of every error the ddd-kit libraries throw. `code` is stable (an HTTP mapping, a log
 * query or a retry rule keys on it, never on a class name or a message), and `instanceof
 * DddKitError` holds for errors of any installed copy of any ddd-kit package, TypeError-based
 * ones included (see DddKitTypeError).
 */
export class DddKitError extends Error {
  /** Stable, upper snake case, e.g. `OPTIMISTIC_LOCK`. */
  readonly code: string = 'DDD_KIT_ERROR';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    Object.defineProperty(this, BRAND, { value: true });
  }

  // `instanceof DddKitError` asks for the brand (so it spans copies of this package and the
  // TypeError family); a subclass keeps the ordinary prototype check.
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this === DddKitError) return isBranded(value);
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

/**
 * A ddd-kit error about bad arguments or options: a TypeError, as Node raises for those, and a
 * DddKitError by `instanceof` and `code`.
 */
export class DddKitTypeError extends TypeError {
  readonly code: string = 'DDD_KIT_ARGUMENT';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** The `code` of a ddd-kit error (of any installed copy), else undefined. */
export function dddKitErrorCode(error: unknown): string | undefined {
  return isBranded(error) && typeof error.code === 'string' ? error.code : undefined;
}

/**
 * A store did not answer an operation within its deadline (`operationTimeoutMs`). Its outcome is
 * unknown, as after a lost reply: the command may still run when the store answers again. The
 * libraries treat it so (a `prepare` releases what it may have written, nothing else is released
 * on a guess); an application answers it like an unreachable store (a 503, retry later).
 */
export class OperationTimeoutError extends DddKitError {
  override readonly code = 'OPERATION_TIMEOUT';

  constructor(
    /** What waited, e.g. `'prepare-key redis prepare'`; undefined when the caller named nothing. */
    readonly operation: string | undefined,
    readonly timeoutMs: number,
  ) {
    super(`${operation === undefined ? '' : `${operation}: `}no answer within ${timeoutMs} ms`);
  }
}

/** `@Aggregate` given options it cannot take. */
export class AggregateDeclarationError extends DddKitError {
  override readonly code = 'AGGREGATE_DECLARATION';
}

// The PostgreSQL transaction path (`@ddd-kit/core/postgres`).

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
