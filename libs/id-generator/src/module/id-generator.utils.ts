import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';

/** The injection token of the generator configured under `name` in `generators`. */
export function getIdGeneratorToken(name: string): string {
  if (typeof name !== 'string' || name.length === 0)
    throw new IdGeneratorOptionsError(`a generator name must be a non-empty string, got ${JSON.stringify(name)}`);
  return `DddKitIdGenerator:${name}`;
}
