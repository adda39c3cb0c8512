import { RepositoryConfigurationError } from '../errors.js';
import type { UniqueKeyDefinition, UniqueKeyValue } from './unique-key.interfaces.js';

// What @UniqueKey declared, per class (a static storage, read when a repository is configured).
const declared = new Map<Function, UniqueKeyDefinition[]>();

/**
 * Declares a unique field of an aggregate, kept by its repository through the reservations of
 * the PrepareKey named `name`:
 *
 * ```ts
 * @Aggregate({ name: 'user' })
 * @UniqueKey('username', (user: User) => user.username)
 * export class User extends AggregateRoot<string> { username!: string }
 * ```
 *
 * `insert` reserves every key, then writes; `update` reserves each changed value, writes, then
 * releases the old one; `remove` writes, then releases. A value held by another aggregate is a
 * UniqueKeyViolationError and nothing is written. Several per class; a subclass inherits its
 * parents' keys. `null` or `undefined` reserves nothing (an optional field).
 */
export function UniqueKey<T>(name: string, value: (aggregate: T) => UniqueKeyValue): ClassDecorator {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new RepositoryConfigurationError(
      `@UniqueKey needs the name of a PrepareKey, e.g. @UniqueKey('username', (user) => user.username); got ${JSON.stringify(name)}`,
    );
  }
  if (typeof value !== 'function') {
    throw new RepositoryConfigurationError(
      `@UniqueKey('${name}') needs a function that reads the value from the aggregate, e.g. (user) => user.${name}`,
    );
  }
  return (target) => {
    const own = declared.get(target) ?? [];
    if (own.some((definition) => definition.name === name)) {
      throw new RepositoryConfigurationError(`${target.name} declares @UniqueKey('${name}') twice`);
    }
    declared.set(target, [...own, { name, value: value as UniqueKeyDefinition['value'] }]);
  };
}

/** The unique keys of an aggregate class, its parents' included. */
export function getUniqueKeys(target: Function): readonly UniqueKeyDefinition[] {
  const all: UniqueKeyDefinition[] = [];
  for (let c: Function | null = target; c && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    for (const definition of declared.get(c) ?? [])
      if (!all.some((d) => d.name === definition.name)) all.push(definition);
  }
  return all;
}
