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
 * The user secret from `Authorization: Bearer <secret>` (the scheme in any case, RFC 7235), given
 * every `Authorization` header the request carried (Node keeps only the first of several in
 * `headers`; `headersDistinct` has them all). None: 401. One that is empty, of another scheme or
 * not a secret of this service, or more than one (which would be honoured is anyone's guess):
 * 401 `invalid_request`.
 */
export function bearerSecret(headers: readonly string[] | string | undefined): string {
  const sent = typeof headers === 'string' ? [headers] : (headers ?? []);
  if (sent.length === 0) {
    throw new MissingUserSecretError(
      'Authorization: Bearer <secret> is required: the secret POST /users returned for this user',
      challenge(),
    );
  }
  if (sent.length > 1) {
    throw new MissingUserSecretError('send one Authorization header, not several', challenge('invalid_request'));
  }
  const match = /^Bearer +(\S+) *$/i.exec(sent[0]);
  if (!match || !USER_SECRET_PATTERN.test(match[1])) {
    throw new MissingUserSecretError(
      'Authorization must be "Bearer <secret>", the 43-character secret POST /users returned for this user',
      challenge('invalid_request'),
    );
  }
  return match[1];
}
