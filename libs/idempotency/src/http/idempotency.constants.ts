/** The options IdempotencyModule resolved (an internal token). */
export const IDEMPOTENCY_MODULE_OPTIONS = Symbol.for('@ddd-kit/idempotency:module-options');
/** The store IdempotencyModule uses; inject it with @InjectIdempotencyStore(). */
export const IDEMPOTENCY_STORE = Symbol.for('@ddd-kit/idempotency:store');
/** The metadata @Idempotent() puts on a handler. */
export const IDEMPOTENT_METADATA = '@ddd-kit/idempotency:idempotent';

export const DEFAULT_HEADER = 'Idempotency-Key';
/** The header a replayed response carries. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** The response headers kept with a result and set again on its replay. */
export const DEFAULT_RESPONSE_HEADERS: readonly string[] = [
  'Location',
  'ETag',
  'Content-Type',
  'Content-Location',
  'Last-Modified',
  'Cache-Control',
];
/** The longest key a client may send (characters inside the quotes). */
export const MAX_HEADER_KEY_LENGTH = 255;
