import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
import { DataSyncExplorer } from './data-sync/data-sync.explorer.js';
import { OutboxRelay } from './outbox/outbox-relay.js';
import { RepositoryConfigurationError } from './errors/repository-configuration.error.js';
import type {
  RepositoryModuleAsyncOptions,
  RepositoryModuleOptions,
  RepositoryOptionsFactory,
} from './interfaces/repository-module-options.interface.js';
import { RepositoryBinder } from './repository.binder.js';
import {
  REPOSITORY_CONNECTION,
  REPOSITORY_MODULE_OPTIONS,
  REPOSITORY_POSTGRES,
  REPOSITORY_POSTGRES_POOL,
} from './repository.constants.js';
import {
  connectionProvider,
  outboxRelayProvider,
  outboxStoresProvider,
  postgresPoolProvider,
  postgresProvider,
  validateRepositoryModuleOptions,
  type RepositoryConnectionHandle,
  type RepositoryPostgresHandle,
} from './repository.providers.js';

/** The store handles, for RepositoryHealthIndicator (`@ddd-kit/repository/health`) wherever it is provided. */
const healthTokens = [REPOSITORY_CONNECTION, REPOSITORY_POSTGRES];

const sharedProviders: Provider[] = [
  connectionProvider,
  postgresProvider,
  postgresPoolProvider,
  {
    provide: DataSyncEventBus,
    inject: [REPOSITORY_MODULE_OPTIONS],
    useFactory: (options: RepositoryModuleOptions) => new DataSyncEventBus({ onHandlerError: options.onDataSyncError }),
  },
  DataSyncExplorer,
  outboxStoresProvider,
  outboxRelayProvider,
  RepositoryBinder,
];

/**
 * Owns what every repository shares: the Mongoose connection and the pg.Pool (each closed on
 * shutdown when opened here), the event bus, the binder.
 */
@Global()
@Module({})
export class RepositoryCoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(REPOSITORY_CONNECTION) private readonly handle: RepositoryConnectionHandle,
    @Inject(REPOSITORY_POSTGRES) private readonly postgres: RepositoryPostgresHandle,
    @Inject(OutboxRelay) private readonly relay: OutboxRelay | null,
  ) {}

  static forRoot(options: RepositoryModuleOptions = {}): DynamicModule {
    const validated = validateRepositoryModuleOptions(options);
    return {
      module: RepositoryCoreModule,
      imports: [DiscoveryModule],
      providers: [{ provide: REPOSITORY_MODULE_OPTIONS, useValue: validated }, ...sharedProviders],
      exports: [DataSyncEventBus, RepositoryBinder, REPOSITORY_POSTGRES_POOL, OutboxRelay, ...healthTokens],
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
      providers: [...providers, ...sharedProviders],
      exports: [DataSyncEventBus, RepositoryBinder, REPOSITORY_POSTGRES_POOL, OutboxRelay, ...healthTokens],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    // The relay stopped in its beforeApplicationShutdown already (so a pool the application
    // closes in this phase was still open); stop() again is a no-op, kept for hosts that skip that hook.
    await this.relay?.stop();
    await Promise.all([
      this.handle.owned && this.handle.connection !== null ? this.handle.connection.close() : undefined,
      this.postgres.owned && this.postgres.pool !== null ? this.postgres.pool.end() : undefined,
    ]);
  }
}
