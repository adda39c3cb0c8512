import { describe, expect, it } from '@jest/globals';
import { UnauthorizedException } from '@nestjs/common';
import { bearerSecret, MissingUserSecretError } from './bearer-token.js';
import { issueUserSecret } from './user-secret.js';

describe('bearerSecret', () => {
  const { secret } = issueUserSecret();

  it('takes the secret from "Bearer <secret>", the scheme in any case', () => {
    expect(bearerSecret(`Bearer ${secret}`)).toBe(secret);
    expect(bearerSecret(`bearer ${secret}`)).toBe(secret);
    expect(bearerSecret(`BEARER  ${secret} `)).toBe(secret);
  });

  it('takes it from the one header of a request (as headersDistinct lists them)', () => {
    expect(bearerSecret([`Bearer ${secret}`])).toBe(secret);
  });

  it.each([
    ['no header', undefined],
    ['an empty list of headers', []],
  ])('refuses %s with a 401 and a plain Bearer challenge', (_label, header) => {
    const error = catchError(() => bearerSecret(header));
    expect(error).toBeInstanceOf(UnauthorizedException);
    expect((error as MissingUserSecretError).getStatus()).toBe(401);
    expect((error as MissingUserSecretError).challenge).toBe('Bearer realm="registration"');
  });

  it.each<[string, string | string[]]>([
    ['an empty header', ''],
    ['a blank header', '  '],
    ['two headers, both the secret', [`Bearer ${secret}`, `Bearer ${secret}`]],
    ['two headers, one of them the secret', [`Bearer ${secret}`, 'Bearer x']],
    ['another scheme', `Basic ${Buffer.from(`u:${secret}`).toString('base64')}`],
    ['the scheme alone', 'Bearer'],
    ['the secret without a scheme', secret],
    ['a secret one character short', `Bearer ${secret.slice(1)}`],
    ['a secret one character long', `Bearer ${secret}x`],
    ['characters a secret never has', `Bearer ${secret.slice(1)}=`],
    ['two tokens', `Bearer ${secret} ${secret}`],
  ])('refuses %s with a 401 and error="invalid_request"', (_label, header) => {
    const error = catchError(() => bearerSecret(header));
    expect(error).toBeInstanceOf(MissingUserSecretError);
    expect((error as MissingUserSecretError).getStatus()).toBe(401);
    expect((error as MissingUserSecretError).challenge).toBe('Bearer realm="registration", error="invalid_request"');
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}
