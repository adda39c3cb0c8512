import { BadRequestException } from '@nestjs/common';

/**
 * A username is 3–32 characters from [a-z0-9_.-], starting with a letter or digit. It is
 * case-folded before anything else, so 'Alice' and 'alice' are one name: the folded form is
 * what is reserved, stored and returned.
 */
export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{2,31}$/;
export const USERNAME_RULE =
  '3–32 characters from a-z, 0-9, "_", "." and "-", starting with a letter or digit (case-insensitive)';

/**
 * Case folding of ASCII letters only (A–Z to a–z). Anything else stays as it came, so that the
 * rule refuses it: String#toLowerCase would turn the Kelvin sign (U+212A) into "k" and let a
 * name outside a-z through as another spelling of an ASCII one.
 */
export function foldUsername<T>(value: T): T {
  return (typeof value === 'string' ? value.replace(/[A-Z]+/g, (upper) => upper.toLowerCase()) : value) as T;
}

export function normalizeUsername(input: unknown, field = 'username'): string {
  if (typeof input !== 'string') {
    throw new BadRequestException(`${field} must be a string: ${USERNAME_RULE}`);
  }
  const folded = foldUsername(input);
  if (!USERNAME_PATTERN.test(folded)) {
    throw new BadRequestException(`${field} is invalid: ${USERNAME_RULE}`);
  }
  return folded;
}
