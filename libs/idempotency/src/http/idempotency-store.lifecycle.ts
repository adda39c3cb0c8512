import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { IdempotencyArgumentError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency.interfaces.js';
import { IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENCY_STORE, IDEMPOTENT_METADATA } from './idempotency.constants.js';
import type { ResolvedIdempotencyOptions } from './idempotency-module.options.js';
import type { IdempotentOptions } from './idempotency-module-options.interface.js';

/** What a store may do at start-up and shutdown (PostgresIdempotencyStore: create its table, stop its sweep). */
interface StoreLifecycle {
  ensureSchema?(): Promise<void>;
  close?(): Promise<void>;
}

/**
 * At start-up: refuses a route that names secret fields when no encryptionKey is set (its
 * responses would be kept in the clear), and creates (or checks) the store's table, so that no
 * request's transaction ever creates one and a missing table fails the start, not a request.
 */
@Injectable()
export class IdempotencyStoreLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(IDEMPOTENCY_STORE) private readonly store: IdempotencyStore & StoreLifecycle,
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: ResolvedIdempotencyOptions,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.options.encryptionKey === undefined) {
      const unsealed = this.routesWithSecretFields();
      if (unsealed.length > 0)
        throw new IdempotencyArgumentError(
          `IdempotencyModule: ${unsealed.join(', ')} name secretFields, but the module has no encryptionKey; ` +
            'set IdempotencyModule.forRoot({ encryptionKey }) (a random secret of at least 32 bytes)',
        );
    }
    await this.store.ensureSchema?.();
  }

  /** `Controller.method` of every @Idempotent() route naming secret fields. */
  private routesWithSecretFields(): string[] {
    const found: string[] = [];
    const named = (target: object | undefined) =>
      (
        (target && (Reflect.getMetadata(IDEMPOTENT_METADATA, target) as IdempotentOptions | undefined)?.secretFields) ??
        []
      ).length > 0;
    for (const wrapper of this.discovery.getControllers()) {
      const type = wrapper.metatype as (new (...args: never[]) => object) | undefined;
      if (typeof type !== 'function') continue;
      const onClass = named(type);
      for (const method of this.scanner.getAllMethodNames(type.prototype)) {
        const handler = (type.prototype as Record<string, object>)[method];
        if (named(handler) || (onClass && Reflect.getMetadata(IDEMPOTENT_METADATA, handler) === undefined))
          found.push(`${type.name}.${method}`);
      }
    }
    return found;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close?.();
  }
}
