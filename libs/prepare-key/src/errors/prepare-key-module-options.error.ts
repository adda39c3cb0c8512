import { DddKitTypeError } from '@ddd-kit/core';

/** Invalid PrepareKeyModule options. Raised at bootstrap; the message says what to change. */
export class PrepareKeyModuleOptionsError extends DddKitTypeError {
  override readonly code = 'PREPARE_KEY_MODULE_OPTIONS';
}
