import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { IdempotencyStore } from '../idempotency.interfaces.js';
import { IDEMPOTENCY_STORE } from './idempotency.constants.js';

/** What a store may do at start-up and shutdown (PostgresIdempotencyStore: create its table, stop its sweep). */
interface StoreLifecycle {
  ensureSchema?(): Promise<void>;
  close?(): Promise<void>;
}

/**
 * Creates (or checks) the store's table when the application starts, so that no request's
 * transaction ever creates one, and a missing table fails the start rather than a request.
 */
@Injectable()
export class IdempotencyStoreLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(IDEMPOTENCY_STORE) private readonly store: IdempotencyStore & StoreLifecycle) {}

  async onModuleInit(): Promise<void> {
    await this.store.ensureSchema?.();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close?.();
  }
}
