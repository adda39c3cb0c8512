import type { PrepareKey } from '../prepare-key.js';

/** A class that declares a key: PrepareKey itself or an (abstract) subclass of it. */
export type PrepareKeyClass<T extends PrepareKey<any> = PrepareKey<any>> = abstract new (...args: any[]) => T;

/** One `@PreparableKey` declaration: the class and the key name it serves. */
export interface PreparableKeyDeclaration {
  readonly target: PrepareKeyClass;
  readonly name: string;
}
