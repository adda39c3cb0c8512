import { IdGeneratorError } from '../errors.js';
import { toAsyncIdGenerator } from '../generators/async-id-generator.js';
import type { AsyncIdGenerator } from '../id-generator.interfaces.js';
import { getNamedAggregate } from './named-aggregate.utils.js';
import type { AggregateIdGeneratorFactory } from './aggregate-id-generator-factory.js';
import { formatNamedAggregate, namedAggregateKey, type NamedAggregate } from '@ddd-kit/core/internal';
import { getOrder } from './order.decorator.js';

/**
 * The generator of each named aggregate, chosen once and cached: the factories are asked in
 * `@Order` order (lowest first; ties keep their configured order), the built-in one last, and
 * the first non-null answer is kept for that (context, aggregate) pair. Injectable; IdGeneratorModule provides it.
 */
export class AggregateIdGeneratorRegistrar {
  /** The chain, in the order it is asked. */
  readonly factories: readonly AggregateIdGeneratorFactory[];
  private readonly cache = new Map<string, AsyncIdGenerator>();

  constructor(factories: readonly AggregateIdGeneratorFactory[], builtIn?: AggregateIdGeneratorFactory) {
    const ordered = factories.map((factory, index) => ({ factory, index, order: getOrder(factory) }));
    ordered.sort((a, b) => a.order - b.order || a.index - b.index);
    this.factories = Object.freeze([...ordered.map((o) => o.factory), ...(builtIn ? [builtIn] : [])]);
  }

  /**
   * The generator for an `@Aggregate` class, an instance of one, or a NamedAggregate. It offers
   * `generateAsync()`: a factory's generator that lacks it comes wrapped in an adapter whose
   * `generateAsync()` resolves `generate()` (and whose `generator` is the factory's).
   */
  get(aggregate: Function | object | NamedAggregate): AsyncIdGenerator {
    const named = getNamedAggregate(aggregate);
    const key = namedAggregateKey(named);
    const cached = this.cache.get(key);
    if (cached) return cached;
    for (const factory of this.factories) {
      const generator = factory.create(named);
      if (generator === null || generator === undefined) continue;
      if (typeof generator.generate !== 'function') {
        throw new IdGeneratorError(
          `${factory.constructor.name}.create(${formatNamedAggregate(named)}) returned something that is not an IdGenerator`,
        );
      }
      const usable = toAsyncIdGenerator(generator);
      this.cache.set(key, usable);
      return usable;
    }
    throw new IdGeneratorError(`No AggregateIdGeneratorFactory made a generator for ${formatNamedAggregate(named)}`);
  }

  /** A new ID for the aggregate. */
  generateId(aggregate: Function | object | NamedAggregate): string {
    return this.get(aggregate).generate();
  }

  /** A new ID for the aggregate, waiting (without blocking) where `generateId` would throw for a passing reason. */
  generateIdAsync(aggregate: Function | object | NamedAggregate): Promise<string> {
    return this.get(aggregate).generateAsync();
  }
}
