import { PrepareKeyDeclarationError } from './errors.js';
import type { PrepareKeyClass, PreparableKeyDeclaration } from './interfaces/preparable-key-declaration.interface.js';
import { PREPARE_KEY_TOKEN_PREFIX } from './prepare-key.constants.js';
import { PrepareKey } from './prepare-key.js';
import { assertName } from './prepare-key.validation.js';
import { PreparableKeyStorage } from './storages/preparable-key.storage.js';

/**
 * The injection token of a key: `@InjectPrepareKey(x)` is `@Inject(getPrepareKeyToken(x))`.
 * A class maps to the token of the name it declares, so
 * `getPrepareKeyToken(UsernamePrepareKey) === getPrepareKeyToken('username')`.
 */
export function getPrepareKeyToken(nameOrClass: string | PrepareKeyClass): string {
  const name = typeof nameOrClass === 'string' ? checkedName(nameOrClass) : declarationOf(nameOrClass).name;
  return `${PREPARE_KEY_TOKEN_PREFIX}${name}`;
}

/** True for PrepareKey and every class that extends it. */
export function isPrepareKeyClass(value: unknown): value is PrepareKeyClass {
  return typeof value === 'function' && (value === PrepareKey || value.prototype instanceof PrepareKey);
}

/**
 * The declaration of a key class: what @PreparableKey recorded, or — for a subclass of
 * PrepareKey that was not decorated — its simple class name, the same default as a blank
 * @PreparableKey().
 */
export function declarationOf(target: PrepareKeyClass): PreparableKeyDeclaration {
  const declared = PreparableKeyStorage.get(target);
  if (declared) return declared;
  if (!isPrepareKeyClass(target) || target === PrepareKey) {
    throw new PrepareKeyDeclarationError(
      `${describeValue(target)} is not a PrepareKey class: declare keys as ` +
        `@PreparableKey('name') abstract class XPrepareKey extends PrepareKey<V> {}`,
    );
  }
  return { target, name: checkedName(target.name) };
}

/** A declared key name: used as given when non-blank. */
export function checkedName(name: string): string {
  try {
    assertName(name);
  } catch (error) {
    throw new PrepareKeyDeclarationError(`${(error as Error).message}; got ${describeValue(name)}`);
  }
  return name;
}

export function describeValue(value: unknown): string {
  if (typeof value === 'function') return value.name ? `class ${value.name}` : 'an anonymous function';
  if (typeof value === 'string') return `'${value}'`;
  return value === null ? 'null' : typeof value;
}
