import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { IdempotencyArgumentError } from '../errors.js';
import { IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENCY_STORE } from './idempotency.constants.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IdempotencyStoreLifecycle } from './idempotency-store.lifecycle.js';
import { resolveIdempotencyOptions, type ResolvedIdempotencyOptions } from './idempotency-module.options.js';
import type {
  IdempotencyModuleAsyncOptions,
  IdempotencyModuleOptions,
} from './idempotency-module-options.interface.js';

const shared: Provider[] = [
  {
    provide: IDEMPOTENCY_STORE,
    inject: [IDEMPOTENCY_MODULE_OPTIONS],
    useFactory: (options: ResolvedIdempotencyOptions) => options.store,
  },
  IdempotencyInterceptor,
  IdempotencyStoreLifecycle,
];

/**
 * Repeated requests for an application: the store that `@Idempotent()` routes (and an inbox)
 * run through. Global, so a controller anywhere can use `@Idempotent()`.
 *
 *   IdempotencyModule.forRoot({ store: new RedisIdempotencyStore(redis), encryptionKey: process.env.IDEMPOTENCY_SECRET })
 */
@Module({})
export class IdempotencyModule {
  static forRoot(options: IdempotencyModuleOptions = {}): DynamicModule {
    const resolved = resolveIdempotencyOptions(options);
    return {
      module: IdempotencyModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [{ provide: IDEMPOTENCY_MODULE_OPTIONS, useValue: resolved }, ...shared],
      exports: [IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENCY_STORE, IdempotencyInterceptor],
    };
  }

  static forRootAsync(options: IdempotencyModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== 'function')
      throw new IdempotencyArgumentError('IdempotencyModule.forRootAsync needs { useFactory, inject?, imports? }');
    return {
      module: IdempotencyModule,
      global: true,
      imports: [DiscoveryModule, ...(options.imports ?? [])],
      providers: [
        {
          provide: IDEMPOTENCY_MODULE_OPTIONS,
          inject: options.inject ?? [],
          useFactory: async (...args: unknown[]) => resolveIdempotencyOptions(await options.useFactory(...args)),
        },
        ...shared,
      ],
      exports: [IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENCY_STORE, IdempotencyInterceptor],
    };
  }
}
