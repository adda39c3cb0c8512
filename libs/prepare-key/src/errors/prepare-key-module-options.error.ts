/** Invalid PrepareKeyModule options. Raised at bootstrap; the message says what to change. */
export class PrepareKeyModuleOptionsError extends TypeError {
  override readonly name = 'PrepareKeyModuleOptionsError';
}
