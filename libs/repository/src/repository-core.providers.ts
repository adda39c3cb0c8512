import type { FactoryProvider, Provider } from '@nestjs/common';
import {
  builtInBackendProviders,
  createBuiltInBackends,
  validateBuiltInBackendOptions,
} from './backends/built-in.backends.js';
import type { RepositoryBackend } from './backends/repository-backend.interface.js';
import { DataSyncEventBus } from './data-sync/data-sync-event-bus.js';
import { DataSyncExplorer } from './data-sync/data-sync.explorer.js';
import { RepositoryConfigurationError } from './errors.js';
import type { RepositoryModuleOptions } from './interfaces/repository-module-options.interface.js';
import { OutboxRelay } from './outbox/outbox-relay.js';
import { validateRelaySettings } from './outbox/outbox-relay.settings.js';
import type { RepositoryOutboxOptions } from './outbox/outbox.options.js';
import type { OutboxStore } from './outbox/outbox.interfaces.js';
import { RepositoryBinder } from './repository.binder.js';
import { REPOSITORY_BACKENDS, REPOSITORY_MODULE_OPTIONS, REPOSITORY_OUTBOX_STORES } from './repository.constants.js';

/** Throws RepositoryConfigurationError, saying what to do, for options that cannot work. */
export function validateRepositoryModuleOptions(options: unknown): RepositoryModuleOptions {
  const fail = (what: string): never => {
    throw new RepositoryConfigurationError(`RepositoryModule options: ${what}`);
  };
  if (options === null || typeof options !== 'object')
    return fail('expected an object such as {} (in memory) or { uri }');
  const { onDataSyncError, backends, outbox } = options as RepositoryModuleOptions;
  if (onDataSyncError !== undefined && typeof onDataSyncError !== 'function')
    fail('onDataSyncError must be a function');
  if (backends !== undefined) {
    if (!Array.isArray(backends)) fail('backends must be an array of RepositoryBackend');
    backends.forEach((backend: RepositoryBackend, i) => {
      if (
        backend === null ||
        typeof backend !== 'object' ||
        typeof backend.name !== 'string' ||
        backend.name.length === 0 ||
        typeof backend.owns !== 'function' ||
        typeof backend.configure !== 'function'
      )
        fail(
          `backends[${i}] must be a RepositoryBackend (a name, owns(repository) and configure(repository, feature, context))`,
        );
    });
  }
  if (outbox !== undefined && typeof outbox !== 'boolean') {
    if (outbox === null || typeof outbox !== 'object')
      fail('outbox must be true, false or an object of outbox options');
    if (outbox.relay !== undefined && typeof outbox.relay !== 'boolean') fail('outbox.relay must be a boolean');
    try {
      validateRelaySettings(outbox);
    } catch (error) {
      fail((error as Error).message);
    }
  }
  validateBuiltInBackendOptions(options as RepositoryModuleOptions, fail);
  return options as RepositoryModuleOptions;
}

/** The outbox options when the outbox is on, else undefined. */
function outboxOptionsOf(options: RepositoryModuleOptions): RepositoryOutboxOptions | undefined {
  const outbox = options.outbox;
  if (outbox === undefined || outbox === false) return undefined;
  return outbox === true ? {} : outbox;
}

/** Every backend, connected: the options' own (first), then the built-in ones they configure. */
const backendsProvider: FactoryProvider = {
  provide: REPOSITORY_BACKENDS,
  inject: [REPOSITORY_MODULE_OPTIONS],
  useFactory: async (options: RepositoryModuleOptions): Promise<readonly RepositoryBackend[]> => {
    const backends = [...(options.backends ?? []), ...createBuiltInBackends(options)];
    const outcomes = await Promise.allSettled(backends.map((backend) => backend.connect?.()));
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed !== undefined) {
      // A failed start runs no shutdown hook: what did connect is closed here.
      await Promise.all(
        backends.map((backend, i) =>
          outcomes[i].status === 'fulfilled' ? backend.close?.().catch(() => undefined) : undefined,
        ),
      );
      throw failed.reason;
    }
    return backends;
  },
};

/** Each backend's outbox store (those that have one), or null when the outbox is off. */
const outboxStoresProvider: FactoryProvider = {
  provide: REPOSITORY_OUTBOX_STORES,
  inject: [REPOSITORY_MODULE_OPTIONS, REPOSITORY_BACKENDS],
  useFactory: async (
    options: RepositoryModuleOptions,
    backends: readonly RepositoryBackend[],
  ): Promise<ReadonlyMap<RepositoryBackend, OutboxStore> | null> => {
    const outbox = outboxOptionsOf(options);
    if (outbox === undefined) return null;
    const stores = new Map<RepositoryBackend, OutboxStore>();
    for (const backend of backends) {
      if (backend.createOutboxStore !== undefined) stores.set(backend, await backend.createOutboxStore(outbox));
    }
    return stores;
  },
};

/** The relay over the outbox stores (null when the outbox is off); it starts on bootstrap unless `outbox.relay` is false. */
const outboxRelayProvider: FactoryProvider = {
  provide: OutboxRelay,
  inject: [REPOSITORY_MODULE_OPTIONS, REPOSITORY_OUTBOX_STORES, DataSyncEventBus],
  useFactory: (
    options: RepositoryModuleOptions,
    stores: ReadonlyMap<RepositoryBackend, OutboxStore> | null,
    bus: DataSyncEventBus,
  ): OutboxRelay | null => {
    const outbox = outboxOptionsOf(options);
    if (outbox === undefined || stores === null) return null;
    const { relay, table: _table, notifyChannel: _channel, postgresStore: _store, ...settings } = outbox;
    return new OutboxRelay({
      ...settings,
      stores: [...stores.values()],
      deliver: (aggregate, events) => bus.deliver(aggregate, events),
      autoStart: relay ?? true,
    });
  },
};

/** What RepositoryCoreModule provides beside the options. */
export const repositoryCoreProviders: Provider[] = [
  backendsProvider,
  ...builtInBackendProviders,
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
