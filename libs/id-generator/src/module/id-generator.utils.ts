import { IdGeneratorOptionsError } from '../errors.js';
import { ID_GENERATOR_CONTEXT } from './id-generator.constants.js';

/** The injection token of the generator configured under `name` in `generators`. */
export function getIdGeneratorToken(name: string): string {
  if (typeof name !== 'string' || name.length === 0)
    throw new IdGeneratorOptionsError(`a generator name must be a non-empty string, got ${JSON.stringify(name)}`);
  return `DddKitIdGenerator:${name}`;
}

/**
 * The token of the module's IdGeneratorContext (machine ID, namespace, instance ID: a live view
 * that follows a replacement machine ID); `@InjectIdGeneratorContext()` injects it.
 */
export function getIdGeneratorContextToken(): symbol {
  return ID_GENERATOR_CONTEXT;
}
