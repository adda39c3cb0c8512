import { DddKitTypeError } from '@ddd-kit/core';

/**
 * A `@PreparableKey` declaration (or a class handed to `forFeature`/`getPrepareKeyToken`)
 * that cannot work: the class does not extend PrepareKey, or the name is not usable.
 * Raised where the mistake is made, when the class is decorated or the token is asked for.
 */
export class PrepareKeyDeclarationError extends DddKitTypeError {
  override readonly code = 'PREPARE_KEY_DECLARATION';
}
