import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { bearerSecret, MissingUserSecretError } from './bearer-token.js';

/**
 * The first half of `@RequiresUserSecret()`: a request on `/users/:id…` without one well-formed
 * `Authorization: Bearer <secret>` is a 401, before anything is read from a store and before
 * its fields and If-Match are looked at (its body has been read by then: one that cannot be
 * read is a 400 first, see configureApp). Whose secret it is, UserSecretInterceptor checks.
 */
@Injectable()
export class UserSecretGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    try {
      bearerSecret(http.getRequest<Request>().headersDistinct.authorization);
    } catch (err) {
      if (err instanceof MissingUserSecretError)
        http.getResponse<Response>().setHeader('WWW-Authenticate', err.challenge);
      throw err;
    }
    return true;
  }
}
