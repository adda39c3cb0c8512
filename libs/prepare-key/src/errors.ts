// Every error class of @ddd-kit/prepare-key. Each is a DddKitError by `instanceof` (the argument
// and declaration errors are TypeErrors too) with a stable `code`. The main entry exports those an
// application handles at run time; the ones that stop it at start-up (a bad declaration or
// options, a key with no factory, two classes declaring one name) are told apart by their `code`.
import { DddKitError, DddKitTypeError } from '@ddd-kit/core';

/**
 * Bad input to a PrepareKey operation (key, value or ttlAt). Raised before any backend is
 * touched, so nothing has been written. A TypeError, as Node raises for bad arguments.
 */
export class PrepareKeyArgumentError extends DddKitTypeError {
  override readonly code = 'PREPARE_KEY_ARGUMENT';
}

/**
 * A key change found the old key no longer held by the old value (it was rolled back,
 * re-prepared by another owner, or never held). `newKeyReleased` says what became of the new
 * key it had just taken: released when another value holds the old key; kept when the old key
 * is free, so that the caller's reservation is not lost altogether (release it yourself, with
 * `rollback(newKey, newValue)`, if the change is abandoned).
 */
export class PrepareKeyStateError extends DddKitError {
  override readonly code = 'PREPARE_KEY_STATE';

  constructor(
    readonly prepareKeyName: string,
    readonly oldKey: string,
    readonly newKey: string,
    readonly newKeyReleased = true,
  ) {
    super(
      `PrepareKey '${prepareKeyName}': key '${oldKey}' is not held by the expected old value; ` +
        (newKeyReleased
          ? `another value holds it, so the key change to '${newKey}' was abandoned and '${newKey}' released`
          : `it is free, so '${newKey}' stays held by the new value`),
    );
  }
}

/**
 * The store of a PrepareKey lost its reservations (a Redis restarted without persistence, a
 * flush, a failover to an empty node or shard), recognised by the missing seal in the same atomic
 * step as the operation: nothing was reserved, released or read. The library is restoring the
 * reservations from their owners (the restorers given to `restoreWith`, the `@UniqueKey`
 * repositories); retry once it has (an HTTP service answers 503).
 */
export class PrepareKeyDataLostError extends DddKitError {
  override readonly code = 'PREPARE_KEY_DATA_LOST';

  constructor(
    readonly prepareKeyName: string,
    options?: ErrorOptions,
  ) {
    super(
      `PrepareKey '${prepareKeyName}': the store lost its reservations (the seal is missing); ` +
        'they are being restored from their owners, retry later',
      options,
    );
  }
}

/**
 * The store that PrepareKeyModule connects to itself (`redis: { url }`) could not be reached at
 * start-up. The message names the step and what to do; `cause` is the driver's error.
 */
export class PrepareKeyConnectionError extends DddKitError {
  override readonly code = 'PREPARE_KEY_CONNECTION';
}

/**
 * Raised by every operation of a key while PrepareKeyModule runs with `enabled: false`:
 * the key is injectable (so the application still boots) but no backend serves it.
 */
export class PrepareKeyDisabledError extends DddKitError {
  override readonly code = 'PREPARE_KEY_DISABLED';

  constructor(readonly keyName: string) {
    super(
      `PrepareKey '${keyName}' is disabled: PrepareKeyModule was configured with enabled: false, so no backend ` +
        `serves it and nothing is reserved. Set enabled: true (the default) and configure a factory to use it.`,
    );
  }
}

/**
 * A `@PreparableKey` declaration (or a class handed to `forFeature`/`getPrepareKeyToken`)
 * that cannot work: the class does not extend PrepareKey, or the name is not usable.
 * Raised where the mistake is made, when the class is decorated or the token is asked for.
 */
export class PrepareKeyDeclarationError extends DddKitTypeError {
  override readonly code = 'PREPARE_KEY_DECLARATION';
}

/** Invalid PrepareKeyModule options. Raised at bootstrap; the message says what to change. */
export class PrepareKeyModuleOptionsError extends DddKitTypeError {
  override readonly code = 'PREPARE_KEY_MODULE_OPTIONS';
}

/** Declared keys with no backend to serve them. Raised at bootstrap; the message says how to configure one. */
export class PrepareKeyFactoryMissingError extends DddKitError {
  override readonly code = 'PREPARE_KEY_FACTORY_MISSING';

  constructor(
    /** The declared key names (with their class, when there is one) left without a backend. */
    readonly keys: string[],
    reason: 'no-factory' | 'no-root-module' = 'no-factory',
  ) {
    const list = keys.join(', ');
    const cause =
      reason === 'no-root-module'
        ? `is registered by PrepareKeyModule.forFeature, but no PrepareKeyModule.forRoot() or forRootAsync() was imported`
        : `is declared, but PrepareKeyModule has no factory to create ${keys.length > 1 ? 'them' : 'it'}`;
    super(
      `PrepareKey ${list} ${cause}. Configure a backend in the root module, e.g. ` +
        `PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() }) for one process, ` +
        `PrepareKeyModule.forRoot({ factory: new RedisPrepareKeyFactory(redis) }) or ` +
        `new MongoPrepareKeyFactory(connection) for several; with forRootAsync, return { factory } from useFactory. ` +
        `To run without reservations, pass enabled: false.`,
    );
  }
}

/** Two classes that would be registered under one key name (or one class simple name). Raised at bootstrap. */
export class PrepareKeyNameConflictError extends DddKitError {
  override readonly code = 'PREPARE_KEY_NAME_CONFLICT';

  constructor(
    readonly keyName: string,
    readonly classNames: [string, string],
    kind: 'key name' | 'class name' = 'key name',
  ) {
    const [a, b] = classNames;
    const both = a === b ? `two different classes both named ${a}` : `${a} and ${b}`;
    super(
      kind === 'key name'
        ? `PrepareKey name '${keyName}' is declared by ${both}. Each name must belong to one class: ` +
            `rename one (@PreparableKey('another-name')), or leave one out with PrepareKeyModule.forRoot({ exclude: [...] }).`
        : `PrepareKey classes ${both} would both be injectable as '${keyName}'. ` +
            `Rename one class, or leave one out with PrepareKeyModule.forRoot({ exclude: [...] }).`,
    );
  }
}
