import { IdGeneratorOptionsError } from '../errors.js';

const ORDER = new WeakMap<Function, number>();

/** Unordered factories rank here, between negative and positive orders. */
export const DEFAULT_ORDER = 0;

/** Position of an AggregateIdGeneratorFactory in the chain: lower runs first. */
export function Order(order: number): ClassDecorator {
  if (typeof order !== 'number' || Number.isNaN(order))
    throw new IdGeneratorOptionsError(`@Order takes a number, got ${String(order)}`);
  return (target) => {
    ORDER.set(target, order);
  };
}

/** The `@Order` of a class (inherited), or of an instance's class; DEFAULT_ORDER when none. */
export function getOrder(target: Function | object): number {
  let type: unknown = typeof target === 'function' ? target : (target as object).constructor;
  while (typeof type === 'function') {
    const order = ORDER.get(type);
    if (order !== undefined) return order;
    type = Object.getPrototypeOf(type);
  }
  return DEFAULT_ORDER;
}
