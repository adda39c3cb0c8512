import type { IdGenerator } from '../id-generator.interfaces.js';
import type { NamedAggregate } from '@ddd-kit/core/internal';

/**
 * One link of the chain that picks an aggregate's generator. Return null for aggregates this
 * factory is not responsible for, and the next factory (by `@Order`, lowest first) is asked.
 * The built-in factory answers last. Classes are instantiated by Nest (they may inject).
 */
export abstract class AggregateIdGeneratorFactory {
  abstract create(namedAggregate: NamedAggregate): IdGenerator | null;
}
