import { Inject, Logger, Module } from '@nestjs/common';
import type {
  DynamicModule,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
  Provider,
} from '@nestjs/common';
import { PREPARE_KEY_LOOKUP } from '@ddd-kit/core/internal';
import { openOwnedRedisBackend, type OwnedRedisBackend } from './backends/redis/redis-owned-factory.js';
import { PrepareKeyModuleOptionsError } from './errors.js';
import type {
  PrepareKeyModuleAsyncOptions,
  PrepareKeyModuleOptions,
  PrepareKeyOptionsFactory,
} from './interfaces/prepare-key-module-options.interface.js';
import { PREPARE_KEY_MODULE_OPTIONS, PREPARE_KEY_OWNED_BACKEND, PREPARE_KEY_SCAN } from './prepare-key.constants.js';
import { createClassProviders } from './prepare-key.providers.js';
import { PrepareKeyRegistry } from './prepare-key.registry.js';
import { scanPreparableKeys } from './prepare-key.scanner.js';
import type { PrepareKeyScan } from './prepare-key.scanner.js';

const logger = new Logger('PrepareKeyModule');

/**
 * Owns the registry (the backend keys) and the providers of every scanned key class. Global
 * by default so keys are injectable anywhere and forFeature modules find the registry —
 * through `global` on the dynamic module rather than a @Global() decorator, which
 * `isGlobal: false` could not switch off. A factory is handed a client (Redis, a Mongo
 * connection) that stays the caller's to close; with `redis: { url }` the module opens the
 * client itself and closes it on application shutdown, the last phase, so that every
 * `onModuleDestroy` (a machine-ID release, a service's own clean-up) still has it.
 */
@Module({})
export class PrepareKeyCoreModule implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(PREPARE_KEY_OWNED_BACKEND) private readonly owned: OwnedRedisBackend | null,
    private readonly registry: PrepareKeyRegistry,
  ) {}

  /** The backend's tables exist before the application takes a request (never created inside one). */
  async onModuleInit(): Promise<void> {
    await this.registry.ensureSchema();
  }

  /**
   * Before the application serves: a store that can lose its data (Redis) and is not sealed —
   * new, or wiped while no instance ran — gets every reservation back from the restorers the
   * `@UniqueKey` repositories registered (all registered by now: they are providers), then is
   * sealed. A later loss is recognised by each operation and restored the same way. A store that
   * does not answer now does not stop the start: every operation checks the seal, and the first
   * one restores.
   */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.registry.restoreIfLost();
    } catch (error) {
      logger.warn(
        `could not check or restore the reservations at start-up (the first operation will): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.owned?.close();
  }

  static forRoot(options: PrepareKeyModuleOptions = {}): DynamicModule {
    const scan = scanPreparableKeys(options ?? {});
    return this.build(scan, options?.isGlobal, [], [{ provide: PREPARE_KEY_MODULE_OPTIONS, useValue: options }], false);
  }

  static forRootAsync(options: PrepareKeyModuleAsyncOptions): DynamicModule {
    const scan = scanPreparableKeys(options);
    return this.build(scan, options.isGlobal, options.imports ?? [], createAsyncOptionsProviders(options), true);
  }

  private static build(
    scan: PrepareKeyScan,
    isGlobal: boolean | undefined,
    imports: NonNullable<DynamicModule['imports']>,
    optionsProviders: Provider[],
    fromAsyncFactory: boolean,
  ): DynamicModule {
    const registryProvider: Provider = {
      provide: PrepareKeyRegistry,
      useFactory: async (
        options: PrepareKeyModuleOptions,
        scanned: PrepareKeyScan,
        owned: OwnedRedisBackend | null,
      ) => {
        try {
          return new PrepareKeyRegistry(
            owned ? { ...options, factory: owned.factory } : options,
            scanned,
            fromAsyncFactory,
          );
        } catch (error) {
          // A failed start runs no shutdown hook: the module's own client is closed here.
          await owned?.close();
          throw error;
        }
      },
      inject: [PREPARE_KEY_MODULE_OPTIONS, PREPARE_KEY_SCAN, PREPARE_KEY_OWNED_BACKEND],
    };
    const ownedProvider: Provider = {
      provide: PREPARE_KEY_OWNED_BACKEND,
      useFactory: openOwnedRedisBackend,
      inject: [PREPARE_KEY_MODULE_OPTIONS],
    };
    const keyProviders = scan.declarations.flatMap((declaration) => createClassProviders(declaration));
    return {
      module: PrepareKeyCoreModule,
      global: isGlobal ?? true,
      imports,
      providers: [
        ...optionsProviders,
        { provide: PREPARE_KEY_SCAN, useValue: scan },
        ownedProvider,
        registryProvider,
        // The registry as @ddd-kit/repository's @UniqueKey repositories inject it (waiting for the backend).
        { provide: PREPARE_KEY_LOOKUP, useExisting: PrepareKeyRegistry },
        ...keyProviders,
      ],
      exports: [
        PREPARE_KEY_MODULE_OPTIONS,
        PrepareKeyRegistry,
        PREPARE_KEY_LOOKUP,
        ...keyProviders.map((p) => (p as { provide: unknown }).provide as string),
      ],
    };
  }
}

function createAsyncOptionsProviders(options: PrepareKeyModuleAsyncOptions): Provider[] {
  if (options.useFactory) {
    return [{ provide: PREPARE_KEY_MODULE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] }];
  }
  const optionsFactory = options.useExisting ?? options.useClass;
  if (optionsFactory) {
    const providers: Provider[] = [
      {
        provide: PREPARE_KEY_MODULE_OPTIONS,
        useFactory: (factory: PrepareKeyOptionsFactory) => factory.createPrepareKeyOptions(),
        inject: [optionsFactory],
      },
    ];
    if (!options.useExisting) providers.push({ provide: optionsFactory, useClass: optionsFactory });
    return providers;
  }
  return [
    {
      provide: PREPARE_KEY_MODULE_OPTIONS,
      useFactory: () => {
        throw new PrepareKeyModuleOptionsError(
          'PrepareKeyModule.forRootAsync needs one of useFactory, useClass or useExisting, e.g. ' +
            'forRootAsync({ inject: [ConfigService], useFactory: (config) => ({ factory: new MemoryPrepareKeyFactory() }) })',
        );
      },
    },
  ];
}
