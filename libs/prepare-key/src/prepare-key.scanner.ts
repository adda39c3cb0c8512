import { PrepareKeyModuleOptionsError, PrepareKeyNameConflictError } from './errors.js';
import type { PreparableKeyDeclaration } from './interfaces/preparable-key-declaration.interface.js';
import type { PreparableKeyMatcher, PrepareKeyScanOptions } from './interfaces/prepare-key-module-options.interface.js';
import { describeValue, isPrepareKeyClass } from './prepare-key.utils.js';
import { PreparableKeyStorage } from './storages/preparable-key.storage.js';

/**
 * The decorated classes one PrepareKeyModule.forRoot takes. A mistake found while scanning
 * (a bad matcher, two classes claiming one name) is kept in `problem` and raised at
 * bootstrap by the registry, so the application fails to start with a named error rather
 * than failing while its module files are being imported.
 */
export interface PrepareKeyScan {
  declarations: PreparableKeyDeclaration[];
  problem?: Error;
}

export function scanPreparableKeys(options: PrepareKeyScanOptions): PrepareKeyScan {
  let include: Array<(d: PreparableKeyDeclaration) => boolean> | undefined;
  let exclude: Array<(d: PreparableKeyDeclaration) => boolean>;
  try {
    include = options.include === undefined ? undefined : toPredicates('include', options.include);
    exclude = options.exclude === undefined ? [] : toPredicates('exclude', options.exclude);
  } catch (problem) {
    return { declarations: [], problem: problem as Error };
  }
  const declarations = PreparableKeyStorage.all().filter(
    (d) => (include === undefined || include.some((p) => p(d))) && !exclude.some((p) => p(d)),
  );
  return { declarations, problem: findConflict(declarations) };
}

function toPredicates(
  option: 'include' | 'exclude',
  matchers: PreparableKeyMatcher | PreparableKeyMatcher[],
): Array<(d: PreparableKeyDeclaration) => boolean> {
  return (Array.isArray(matchers) ? matchers : [matchers]).map((matcher) => {
    if (typeof matcher === 'string') return (d) => d.name === matcher || d.target.name === matcher;
    if (matcher instanceof RegExp) return (d) => testRegExp(matcher, d.name) || testRegExp(matcher, d.target.name);
    // A class and a predicate are both functions; a key class is the one whose prototype is a PrepareKey.
    if (isPrepareKeyClass(matcher)) return (d) => d.target === matcher;
    if (typeof matcher === 'function') return (d) => Boolean((matcher as (d: PreparableKeyDeclaration) => boolean)(d));
    throw new PrepareKeyModuleOptionsError(
      `PrepareKeyModule ${option}: ${describeValue(matcher)} is not a key class, a name, a RegExp or a predicate`,
    );
  });
}

function testRegExp(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0; // a /g or /y pattern keeps state between calls
  return pattern.test(text);
}

function findConflict(declarations: PreparableKeyDeclaration[]): Error | undefined {
  const byName = new Map<string, PreparableKeyDeclaration>();
  const byClassName = new Map<string, PreparableKeyDeclaration>();
  for (const declaration of declarations) {
    const sameName = byName.get(declaration.name);
    if (sameName) {
      return new PrepareKeyNameConflictError(declaration.name, [sameName.target.name, declaration.target.name]);
    }
    byName.set(declaration.name, declaration);
    // Each class is also injectable by its simple name, which must then be unambiguous.
    const sameClassName = byClassName.get(declaration.target.name);
    if (sameClassName) {
      return new PrepareKeyNameConflictError(
        declaration.target.name,
        [
          `${sameClassName.target.name} ('${sameClassName.name}')`,
          `${declaration.target.name} ('${declaration.name}')`,
        ],
        'class name',
      );
    }
    byClassName.set(declaration.target.name, declaration);
  }
  return undefined;
}
