import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { AggregateClass } from '../aggregate/aggregate-root.js';
import { ON_DATA_SYNC_METADATA } from '../repository.constants.js';
import { DataSyncEventBus } from './data-sync-event-bus.js';
import type { DataSyncEvent } from './data-sync-event.js';

/**
 * Finds the `@OnDataSync` methods of the application's providers and controllers at bootstrap
 * and subscribes them to the event bus. Runs on module init, or earlier if a write publishes
 * before that (all instances exist by then), and only once.
 */
@Injectable()
export class DataSyncExplorer implements OnModuleInit {
  private readonly logger = new Logger('DataSyncExplorer');
  private explored = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly bus: DataSyncEventBus,
  ) {
    bus.beforeFirstPublish(() => this.explore());
  }

  onModuleInit(): void {
    this.explore();
  }

  explore(): void {
    if (this.explored) return;
    this.explored = true;
    const seen = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (wrapper.isAlias || instance === null || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object | null;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const aggregates = Reflect.getMetadata(ON_DATA_SYNC_METADATA, instance[method] as object) as
          AggregateClass[] | undefined;
        if (aggregates === undefined) continue;
        if (!wrapper.isDependencyTreeStatic()) {
          // A request-scoped instance exists per request; writes happen outside any request.
          this.logger.warn(
            `${wrapper.name as string}.${method} is @OnDataSync but its provider is not a singleton; it is ignored`,
          );
          continue;
        }
        for (const aggregate of aggregates) {
          this.bus.subscribe(aggregate, (events: readonly DataSyncEvent[]) =>
            (instance[method] as (e: readonly DataSyncEvent[]) => unknown).call(instance, events),
          );
        }
      }
    }
  }
}
