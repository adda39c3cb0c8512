import { IdGeneratorError } from './id-generator.error.js';

/** Invalid configuration; thrown at construction or bootstrap, with what to change. */
export class IdGeneratorOptionsError extends IdGeneratorError {
  override readonly code = 'ID_GENERATOR_OPTIONS';
}
