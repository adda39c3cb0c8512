import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
import { OutboxRelay } from './outbox/outbox-relay.js';
import { RepositoryConfigurationError } from './errors.js';
import type {
  RepositoryModuleAsyncOptions,
  RepositoryModuleOptions,
  RepositoryOptionsFactory,
} from './interfaces/repository-module-options.interface.js';
import type { RepositoryBackend } from './backends/repository-backend.interface.js';
import { RepositoryBinder } from './repository.binder.js';
import { REPOSITORY_BACKENDS, REPOSITORY_MODULE_OPTIONS, REPOSITORY_POSTGRES_POOL } from './repository.constants.js';
import { repositoryCoreProviders, validateRepositoryModuleOptions } from './repository-core.providers.js';

/** What the application sees: the bus, the binder (for forFeature), the pool token, the relay, the backends (for health). */
const exported = [DataSyncEventBus, RepositoryBinder, REPOSITORY_POSTGRES_POOL, OutboxRelay, REPOSITORY_BACKENDS];

/**
 * Owns what every repository shares: the backends (connected at bootstrap, closed at shutdown),
 * the event bus, the outbox relay, the binder.
 */
@Global()
@Module({})
export class RepositoryCoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(REPOSITORY_BACKENDS) private readonly backends: readonly RepositoryBackend[],
    @Inject(OutboxRelay) private readonly relay: OutboxRelay | null,
  ) {}

  static forRoot(options: RepositoryModuleOptions = {}): DynamicModule {
    const validated = validateRepositoryModuleOptions(options);
    return {
      module: RepositoryCoreModule,
      imports: [DiscoveryModule],
      providers: [{ provide: REPOSITORY_MODULE_OPTIONS, useValue: validated }, ...repositoryCoreProviders],
      exports: exported,
    };
  }

  static forRootAsync(options: RepositoryModuleAsyncOptions): DynamicModule {
    const given = [options.useFactory, options.useClass, options.useExisting].filter((x) => x !== undefined).length;
    if (given !== 1) {
      throw new RepositoryConfigurationError(
        'RepositoryModule.forRootAsync needs exactly one of useFactory, useClass, useExisting',
      );
    }
    const providers: Provider[] = [];
    if (options.useFactory) {
      const factory = options.useFactory;
      providers.push({
        provide: REPOSITORY_MODULE_OPTIONS,
        inject: options.inject ?? [],
        useFactory: async (...args: unknown[]) => validateRepositoryModuleOptions(await factory(...args)),
      });
    } else {
      const factoryClass = (options.useClass ?? options.useExisting)!;
      if (options.useClass) providers.push({ provide: factoryClass, useClass: factoryClass });
      providers.push({
        provide: REPOSITORY_MODULE_OPTIONS,
        inject: [factoryClass],
        useFactory: async (factory: RepositoryOptionsFactory) =>
          validateRepositoryModuleOptions(await factory.createRepositoryOptions()),
      });
    }
    return {
      module: RepositoryCoreModule,
      imports: [DiscoveryModule, ...(options.imports ?? [])],
      providers: [...providers, ...repositoryCoreProviders],
      exports: exported,
    };
  }

  async onApplicationShutdown(): Promise<void> {
    // The relay stopped in its beforeApplicationShutdown already (so a pool the application
    // closes in this phase was still open); stop() again is a no-op, kept for hosts that skip that hook.
    await this.relay?.stop();
    await Promise.all(this.backends.map((backend) => backend.close?.()));
  }
}
