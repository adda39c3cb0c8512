import type { AggregateClass } from './aggregate.interfaces.js';

/**
 * The name events, errors and tokens use for an aggregate class: the class's own name.
 */
export function getAggregateName(aggregate: AggregateClass | Function): string {
  return aggregate.name;
}
