import { UnauthorizedException } from '@nestjs/common';
import { USER_SECRET_PATTERN } from './user-secret.js';

/** The challenge a 401 carries (RFC 6750 §3); `invalid_request` when a header was sent but is not a bearer secret. */
export const challenge = (error?: 'invalid_request') =>
  `Bearer realm="registration"${error ? `, error="${error}"` : ''}`;

export class MissingUserSecretError extends UnauthorizedException {
  constructor(
    message: string,
    readonly challenge: string,
  ) {
    super(message);
  }
}

/**
 * The user secret from `Authorization: Bearer <secret>` (the scheme in any case, RFC 7235).
 * Absent, another scheme, or a token that cannot be a secret of this service: 401.
 */
export function bearerSecret(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw new MissingUserSecretError(
      'Authorization: Bearer <secret> is required: the secret POST /users returned for this user',
      challenge(),
    );
  }
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || !USER_SECRET_PATTERN.test(match[1])) {
    throw new MissingUserSecretError(
      'Authorization must be "Bearer <secret>", the 43-character secret POST /users returned for this user',
      challenge('invalid_request'),
    );
  }
  return match[1];
}
