import type { PrepareKeyClass, PreparableKeyDeclaration } from '../interfaces/preparable-key-declaration.interface.js';

/**
 * What `@PreparableKey` registered, in declaration order. Static, like @nestjs/mongoose's
 * TypeMetadataStorage: a decorated key class is abstract, so it is no provider Nest's
 * discovery could find. PrepareKeyModule.forRoot reads it to learn every declared key the
 * application has imported; each module instance keeps its own registrations, so this
 * storage holds declarations only, never backends or state.
 */
export class PreparableKeyStorage {
  private static readonly declarations = new Map<PrepareKeyClass, PreparableKeyDeclaration>();

  static add(declaration: PreparableKeyDeclaration): void {
    // A class decorated again (hot reload, a test re-evaluating a file) keeps one entry.
    this.declarations.set(declaration.target, declaration);
  }

  static get(target: PrepareKeyClass): PreparableKeyDeclaration | undefined {
    return this.declarations.get(target);
  }

  static all(): PreparableKeyDeclaration[] {
    return [...this.declarations.values()];
  }
}
