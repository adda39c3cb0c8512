import { CosIdGenerator } from '@ddd-kit/id-generator';

/**
 * Whether `id` can be a user's ID: the user aggregate's generator issues CosIds (15 Radix62
 * characters whose machine and sequence parts are in range; see User and IdGeneratorModule's
 * default generator). Anything else names no user, whatever the store would make of it (a NUL
 * byte, CR/LF, a megabyte): the service answers 404 without asking it.
 */
export function isUserId(id: unknown): id is string {
  if (typeof id !== 'string' || id.length !== CosIdGenerator.ID_LENGTH) return false;
  try {
    CosIdGenerator.parse(id);
    return true;
  } catch {
    return false;
  }
}
