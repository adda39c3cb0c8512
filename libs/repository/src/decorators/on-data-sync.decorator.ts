import type { AggregateClass } from '../aggregate/aggregate-root.js';
import { ON_DATA_SYNC_METADATA } from '../repository.constants.js';

/**
 * Marks a provider method as a handler of the data-sync events of `aggregate`: after each
 * successful insert, update or remove of one, it is called with that write's events. Found at
 * bootstrap among the providers and controllers of the application (singletons only).
 *
 *   @OnDataSync(User)
 *   project(events: readonly DataSyncEvent<string, UserSnapshot>[]) { this.replica.apply(events); }
 */
export function OnDataSync(aggregate: AggregateClass): MethodDecorator {
  if (typeof aggregate !== 'function') {
    throw new TypeError(`@OnDataSync needs an aggregate class, got ${String(aggregate)} (a circular import?)`);
  }
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object | undefined;
    if (typeof method !== 'function') throw new TypeError('@OnDataSync decorates methods only');
    const listened: AggregateClass[] = Reflect.getMetadata(ON_DATA_SYNC_METADATA, method) ?? [];
    Reflect.defineMetadata(ON_DATA_SYNC_METADATA, [...listened, aggregate], method);
    return descriptor;
  };
}
