import { Inject } from '@nestjs/common';
import { IDEMPOTENCY_STORE } from './idempotency.constants.js';

/** The token IdempotencyModule provides its store under. */
export function getIdempotencyStoreToken(): symbol {
  return IDEMPOTENCY_STORE;
}

/** Injects the IdempotencyStore of IdempotencyModule (for an inbox, or a use case that calls `run` itself). */
export const InjectIdempotencyStore = (): PropertyDecorator & ParameterDecorator => Inject(IDEMPOTENCY_STORE);
