import type { AggregateIdGeneratorRegistrar } from '../aggregate/aggregate-id-generator-registrar.js';
import type { NamedAggregate } from '@ddd-kit/core/internal';
import { NotInitializedAggregateIdGeneratorError, NotInitializedGlobalIdGeneratorError } from '../errors.js';
import type { GlobalIdGenerator } from './global-id-generator.js';

interface Registration {
  global: GlobalIdGenerator;
  registrar: AggregateIdGeneratorRegistrar;
}

// Initialised modules, newest last: the static shortcuts use the newest one still running, so
// closing one application of several in a process leaves the others reachable.
const registrations: Registration[] = [];

/** Makes an initialised module reachable by the static shortcuts; returns the undo. */
export function registerIdGenerators(registration: Registration): () => void {
  registrations.push(registration);
  return () => {
    const index = registrations.lastIndexOf(registration);
    if (index >= 0) registrations.splice(index, 1);
  };
}

/** A global (message) ID; NotInitializedGlobalIdGeneratorError before IdGeneratorModule initialised. */
export function generateGlobalId(): string {
  const current = registrations[registrations.length - 1];
  if (!current) throw new NotInitializedGlobalIdGeneratorError();
  return current.global.generate();
}

/** `generateGlobalId()` that waits (without blocking) out a clock step back or a lease renewal. */
export function generateGlobalIdAsync(): Promise<string> {
  const current = registrations[registrations.length - 1];
  if (!current) return Promise.reject(new NotInitializedGlobalIdGeneratorError());
  return current.global.generateAsync();
}

/**
 * A new ID for an `@Aggregate` class, an instance of one, or a NamedAggregate, from its
 * generator in the AggregateIdGeneratorRegistrar; NotInitializedAggregateIdGeneratorError before
 * IdGeneratorModule initialised.
 */
export function generateId(aggregate: Function | object | NamedAggregate): string {
  const current = registrations[registrations.length - 1];
  if (!current) throw new NotInitializedAggregateIdGeneratorError();
  return current.registrar.get(aggregate).generate();
}

/** `generateId(aggregate)` that waits (without blocking) out a clock step back or a lease renewal. */
export function generateIdAsync(aggregate: Function | object | NamedAggregate): Promise<string> {
  const current = registrations[registrations.length - 1];
  if (!current) return Promise.reject(new NotInitializedAggregateIdGeneratorError());
  try {
    return current.registrar.get(aggregate).generateAsync();
  } catch (error) {
    return Promise.reject(error);
  }
}
