/**
 * Bad input to a PrepareKey operation (key, value or ttlAt). Raised before any backend is
 * touched, so nothing has been written. A TypeError, as Node raises for bad arguments.
 */
export class PrepareKeyArgumentError extends TypeError {
  override readonly name = 'PrepareKeyArgumentError';
}
