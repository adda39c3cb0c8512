export { IdempotencyModule } from './idempotency.module.js';
export { Idempotent } from './idempotent.decorator.js';
export { IdempotencyInterceptor } from './idempotency.interceptor.js';
export { getIdempotencyStoreToken, InjectIdempotencyStore } from './inject-idempotency-store.decorator.js';
export { DEFAULT_HEADER, REPLAYED_HEADER } from './idempotency.constants.js';
export { parseIdempotencyKey } from './structured-field.js';
export type {
  IdempotencyModuleAsyncOptions,
  IdempotencyModuleOptions,
  IdempotentOptions,
  IdempotentRequest,
} from './idempotency-module-options.interface.js';
