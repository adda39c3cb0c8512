import { DddKitError } from '@ddd-kit/core';

/** Two classes that would be registered under one key name (or one class simple name). Raised at bootstrap. */
export class PrepareKeyNameConflictError extends DddKitError {
  override readonly code = 'PREPARE_KEY_NAME_CONFLICT';

  constructor(
    readonly keyName: string,
    readonly classNames: [string, string],
    kind: 'key name' | 'class name' = 'key name',
  ) {
    const [a, b] = classNames;
    const both = a === b ? `two different classes both named ${a}` : `${a} and ${b}`;
    super(
      kind === 'key name'
        ? `PrepareKey name '${keyName}' is declared by ${both}. Each name must belong to one class: ` +
            `rename one (@PreparableKey('another-name')), or leave one out with PrepareKeyModule.forRoot({ exclude: [...] }).`
        : `PrepareKey classes ${both} would both be injectable as '${keyName}'. ` +
            `Rename one class, or leave one out with PrepareKeyModule.forRoot({ exclude: [...] }).`,
    );
  }
}
