import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';
import type { IdempotencyStore } from '../idempotency.interfaces.js';

/** The request as IdempotencyModule reads it (Express and Fastify requests both fit). */
export interface IdempotentRequest {
  method?: string;
  url?: string;
  originalUrl?: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

export interface IdempotencyModuleOptions {
  /** Where records live; default a MemoryIdempotencyStore (one process). */
  store?: IdempotencyStore;
  /** How long a response is replayed, in milliseconds; default 24 hours. */
  ttlMs?: number;
  /** The request header carrying the key; default `Idempotency-Key`. */
  header?: string;
  /**
   * The server secret that response fields named by `@Idempotent({ secretFields })` are
   * encrypted with (AES-256-GCM, under a key derived from this secret, the caller's credentials
   * and the request's key): at least 32 bytes. Required when a route names secret fields.
   */
  encryptionKey?: string | Buffer;
  /**
   * The caller's credentials, which scope keys (another caller's same key is another key) and
   * enter the fingerprint; default the `Authorization` header (absent: the anonymous caller).
   */
  caller?: (request: IdempotentRequest) => string | undefined;
  /** Response headers kept and replayed; default Location, ETag, Content-Type, Content-Location, Last-Modified, Cache-Control. */
  responseHeaders?: readonly string[];
}

export interface IdempotencyModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  useFactory: (...args: any[]) => IdempotencyModuleOptions | Promise<IdempotencyModuleOptions>;
}

/** What `@Idempotent()` says about one handler. */
export interface IdempotentOptions {
  /** A request without the header is a 400 (default: it runs as if the route were not idempotent). */
  required?: boolean;
  /**
   * Top-level fields of the response body that carry a secret: stored encrypted (see
   * IdempotencyModuleOptions.encryptionKey), decrypted only for a repeat by the same caller with the same key.
   */
  secretFields?: readonly string[];
  /** How long this route's responses are replayed; default the module's. */
  ttlMs?: number;
}
