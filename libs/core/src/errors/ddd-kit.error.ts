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
