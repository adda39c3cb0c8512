import { getAggregateMetadata, isNamedAggregate, type NamedAggregate } from '@ddd-kit/core/internal';
import { AggregateNotDecoratedError } from '../errors.js';

/**
 * `{ contextName, aggregateName }` of an `@Aggregate` class, an instance of one, or a
 * NamedAggregate itself. Throws AggregateNotDecoratedError otherwise.
 */
export function getNamedAggregate(aggregate: Function | object): NamedAggregate {
  const metadata = getAggregateMetadata(aggregate);
  if (metadata) return { contextName: metadata.contextName, aggregateName: metadata.aggregateName };
  if (isNamedAggregate(aggregate))
    return { contextName: aggregate.contextName, aggregateName: aggregate.aggregateName };
  throw new AggregateNotDecoratedError(describe(aggregate));
}

function describe(value: unknown): string {
  if (typeof value === 'function') return `class ${value.name || '(anonymous)'}`;
  if (value && typeof value === 'object') return `an instance of ${value.constructor?.name ?? 'Object'}`;
  return String(value);
}
