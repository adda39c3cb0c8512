import { IdGeneratorError } from './id-generator.error.js';

/** `parse` was given something this generator cannot have produced. */
export class InvalidIdError extends IdGeneratorError {
  override readonly code = 'INVALID_ID';

  constructor(
    readonly id: unknown,
    reason: string,
  ) {
    super(
      `Not a valid ID (${reason}): ${typeof id === 'string' ? JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}…` : id) : String(id)}`,
    );
  }
}
