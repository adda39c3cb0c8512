// Every error class of @ddd-kit/repository. Each extends RepositoryError (and so DddKitError) but
// HttpDrainOptionsError, a DddKitError; each has a stable `code`. The main entry exports those an
// application handles at run time; the /nats entry exports NatsPublishError, /client-proxy ClientProxyPublishError,
// /outbox NonRetryableError; the start-up errors
// (a misconfigured module) are told apart by their `code`.
import { DddKitError } from '@ddd-kit/core';

/** Base class of every error this library throws, so callers can tell them from driver errors. */
export class RepositoryError extends DddKitError {
  override readonly code: string = 'REPOSITORY';
}

/**
 * A conditional write (`WHERE version = expectedVersion`) matched nothing: the aggregate was
 * changed or removed since it was loaded. Nothing was written and nothing was published.
 * Reload it and replay the command (`retryOnConflict` does exactly that), or report a conflict.
 */
export class OptimisticLockError extends RepositoryError {
  override readonly code = 'OPTIMISTIC_LOCK';

  constructor(
    /** The aggregate's name (its `@Aggregate` name, else its class name). */
    readonly aggregate: string,
    readonly id: unknown,
    /** The version the write expected to find (the aggregate's `oldVersion`, or the `expectedVersion` it was given). */
    readonly expectedVersion: number,
    /**
     * The version the aggregate was at when last read, when the write knows it: an
     * `expectedVersion` stated for an aggregate loaded at another version. Undefined when the
     * store's conditional write matched nothing (it may have changed, or be gone).
     */
    readonly currentVersion?: number,
  ) {
    super(
      `${aggregate} ${JSON.stringify(id)} is no longer at version ${expectedVersion}` +
        (currentVersion === undefined ? '' : ` (it was read at version ${currentVersion})`) +
        ': it was changed or removed since it was loaded. Reload it and replay the command (see retryOnConflict).',
    );
  }
}

/**
 * Another aggregate holds a value of one of this aggregate's unique keys. Nothing was written,
 * and every value the failed write had just reserved was released again.
 * `name` is the unique key's name (not the class's): tell the error apart with `instanceof`.
 */
export class UniqueKeyViolationError extends RepositoryError {
  override readonly code = 'UNIQUE_KEY_VIOLATION';

  constructor(
    /** The unique key's name (the PrepareKey name), e.g. 'username'. */
    override readonly name: string,
    /** The value that is taken. */
    readonly key: string,
    /**
     * Who holds it, as the reservation says: for code that needs it, never in the message (for
     * a username or an e-mail, the message would tell anyone who holds a name).
     */
    readonly holder?: { aggregate: string; id: unknown },
  ) {
    super(`the ${name} '${key}' is already taken`);
  }
}

/** An ID that is not a non-empty string or a finite number. Nothing was read or written. */
export class InvalidAggregateIdError extends RepositoryError {
  override readonly code = 'INVALID_AGGREGATE_ID';

  constructor(
    readonly aggregate: string,
    readonly id: unknown,
    reason: string,
  ) {
    super(`Invalid ${aggregate} id ${describe(id)}: ${reason}`);
  }
}

// Says what was passed without echoing a large or hostile value in full.
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  if (typeof value === 'symbol' || typeof value === 'function') return `a ${typeof value}`;
  return `${String(value)} (${typeof value})`;
}

/** `insert` of an ID that is already stored. Nothing was written and nothing was published. */
export class DuplicateAggregateError extends RepositoryError {
  override readonly code = 'DUPLICATE_AGGREGATE';

  constructor(
    readonly aggregate: string,
    readonly id: unknown,
    options?: ErrorOptions,
  ) {
    super(
      `${aggregate} ${JSON.stringify(id)} already exists: insert only creates; load it and update instead.`,
      options,
    );
  }
}

/**
 * A write that does not fit the aggregate's state: `update` or `remove` of an aggregate that
 * was never stored, `insert` of one that was, any write but `remove` of a deleted one.
 */
export class AggregateStateError extends RepositoryError {
  override readonly code = 'AGGREGATE_STATE';

  constructor(
    readonly aggregate: string,
    readonly id: unknown,
    message: string,
  ) {
    super(`${aggregate} ${JSON.stringify(id) ?? 'without id'}: ${message}`);
  }
}

/** `insert` of an aggregate without an ID while no ID generator is configured. */
export class MissingIdGeneratorError extends RepositoryError {
  override readonly code = 'MISSING_ID_GENERATOR';

  constructor(readonly aggregate: string) {
    super(
      `${aggregate} has no id and the repository has no ID generator: import ` +
        'IdGeneratorModule.forRoot(...) from @ddd-kit/id-generator (and decorate the class with @Aggregate), ' +
        'pass { idGenerators } to the repository, or assign an id before insert.',
    );
  }
}

/** A repository or RepositoryModule set up in a way that cannot work; raised at bootstrap. */
export class RepositoryConfigurationError extends RepositoryError {
  override readonly code = 'REPOSITORY_CONFIGURATION';
}

/**
 * The handlers of one write's events did not settle within the relay's `handlerTimeoutMs`: the
 * delivery counts as failed (retried after a backoff, a dead letter after `maxAttempts`). The
 * late call itself is not stopped — JavaScript cannot cancel a promise — so a handler that
 * finishes afterwards has run once more than the outbox counted, which idempotent handlers allow.
 */
export class OutboxHandlerTimeoutError extends RepositoryError {
  override readonly code = 'OUTBOX_HANDLER_TIMEOUT';
}

/**
 * Thrown by a data-sync handler that an outbox relay delivers to: retrying cannot help (the event
 * can never be handled as it is). The event becomes a dead letter at once, with no retry; so
 * does a delivery where one of several handlers threw it (the others ran). Outside a relay it is
 * an error like any other. Pass the original error as `cause`.
 */
export class NonRetryableError extends RepositoryError {
  override readonly code = 'NON_RETRYABLE';
}

/** An event that cannot be published as it is (no event id, a subject NATS refuses, bytes that cannot be made). */
export class NatsPublishError extends RepositoryError {}

/** An event a ClientProxyPublisher could not publish (no event id, no pattern) or whose publish failed or timed out. */
export class ClientProxyPublishError extends RepositoryError {
  override readonly code = 'CLIENT_PROXY_PUBLISH';
}

/** HttpDrainModule.forRoot got an option it cannot use. */
export class HttpDrainOptionsError extends DddKitError {
  override readonly code = 'HTTP_DRAIN_OPTIONS';
}
