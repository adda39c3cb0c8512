import { IdempotencyArgumentError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency.interfaces.js';
import { assertDuration, DEFAULT_TTL_MS } from '../idempotency.validation.js';
import { MemoryIdempotencyStore } from '../stores/memory/memory-idempotency.store.js';
import { DEFAULT_HEADER, DEFAULT_RESPONSE_HEADERS } from './idempotency.constants.js';
import type { IdempotencyModuleOptions, IdempotentRequest } from './idempotency-module-options.interface.js';

/** IdempotencyModuleOptions with every default applied and every value checked. */
export interface ResolvedIdempotencyOptions {
  store: IdempotencyStore;
  ttlMs: number;
  /** Lower case, as Node keys request headers. */
  header: string;
  headerName: string;
  encryptionKey?: Buffer;
  caller: (request: IdempotentRequest) => string | undefined;
  responseHeaders: readonly string[];
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MIN_SECRET_BYTES = 32;

const authorization = (request: IdempotentRequest): string | undefined => {
  const value = request.headers.authorization;
  return Array.isArray(value) ? value.join(', ') : value;
};

export function resolveIdempotencyOptions(options: IdempotencyModuleOptions | undefined): ResolvedIdempotencyOptions {
  if (options !== undefined && (options === null || typeof options !== 'object'))
    throw new IdempotencyArgumentError('IdempotencyModule: options must be an object');
  const {
    store = new MemoryIdempotencyStore(),
    ttlMs = DEFAULT_TTL_MS,
    header = DEFAULT_HEADER,
    encryptionKey,
    caller = authorization,
    responseHeaders = DEFAULT_RESPONSE_HEADERS,
  } = options ?? {};
  if (typeof (store as Partial<IdempotencyStore> | null)?.run !== 'function')
    throw new IdempotencyArgumentError('IdempotencyModule: store must be an IdempotencyStore (an object with run)');
  assertDuration(ttlMs, 'IdempotencyModule: ttlMs');
  if (typeof header !== 'string' || !TOKEN.test(header))
    throw new IdempotencyArgumentError(
      `IdempotencyModule: header must be a header name, got ${JSON.stringify(header)}`,
    );
  if (typeof caller !== 'function') throw new IdempotencyArgumentError('IdempotencyModule: caller must be a function');
  if (!Array.isArray(responseHeaders) || !responseHeaders.every((h) => typeof h === 'string' && TOKEN.test(h)))
    throw new IdempotencyArgumentError('IdempotencyModule: responseHeaders must be header names');
  let secret: Buffer | undefined;
  if (encryptionKey !== undefined) {
    secret = Buffer.isBuffer(encryptionKey)
      ? Buffer.from(encryptionKey)
      : typeof encryptionKey === 'string'
        ? Buffer.from(encryptionKey, 'utf8')
        : undefined;
    if (secret === undefined || secret.length < MIN_SECRET_BYTES)
      throw new IdempotencyArgumentError(
        `IdempotencyModule: encryptionKey must be a string or Buffer of at least ${MIN_SECRET_BYTES} bytes (a random secret)`,
      );
  }
  return {
    store,
    ttlMs,
    header: header.toLowerCase(),
    headerName: header,
    ...(secret !== undefined ? { encryptionKey: secret } : {}),
    caller,
    // As written (a response sets them in any case; these are the spelling when it cannot tell),
    // one of each name whatever its case.
    responseHeaders: responseHeaders.filter(
      (h, i) => responseHeaders.findIndex((other) => other.toLowerCase() === h.toLowerCase()) === i,
    ),
  };
}
