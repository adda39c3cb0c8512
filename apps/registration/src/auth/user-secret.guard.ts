import { ForbiddenException, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { missing, UsersService } from '../users/users.service.js';
import { bearerSecret, MissingUserSecretError } from './bearer-token.js';
import { matchesUserSecret } from './user-secret.js';

/**
 * Lets a request on `/users/:id…` through only with `Authorization: Bearer <secret>` of user
 * `:id`, before its fields and If-Match are looked at (its body has been read by then: one that
 * cannot be read is a 400 first, see configureApp). 401 without one well-formed bearer secret
 * (before anything is read from a store); 404 when the user does not exist (for an ID that
 * cannot be one, without asking the store); 403 when the secret is not that user's (another
 * user's, a deleted user's, or none at all). The user's existence is public (`GET /users/:id`),
 * so the 404 reveals nothing a 403 would hide.
 *
 * The user ID never changes and the secret is never replaced, so the user the handler loads
 * again afterwards is the one checked here.
 */
@Injectable()
export class UserSecretGuard implements CanActivate {
  constructor(private readonly users: UsersService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    let secret: string;
    try {
      secret = bearerSecret(request.headersDistinct.authorization);
    } catch (err) {
      if (err instanceof MissingUserSecretError)
        http.getResponse<Response>().setHeader('WWW-Authenticate', err.challenge);
      throw err;
    }
    const id = String(request.params.id);
    const user = await this.users.find(id);
    if (!user) throw missing(id);
    if (!matchesUserSecret(secret, user.secretHash))
      throw new ForbiddenException(`this secret does not belong to user '${id}'`);
    return true;
  }
}
