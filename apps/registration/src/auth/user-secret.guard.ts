import {
  ForbiddenException,
  Injectable,
  NotFoundException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { InjectRepository, InvalidAggregateIdError, type IRepository } from '@ddd-kit/repository';
import type { Request, Response } from 'express';
import { User } from '../users/user.aggregate.js';
import { bearerSecret, MissingUserSecretError } from './bearer-token.js';
import { matchesUserSecret } from './user-secret.js';

/**
 * Lets a request on `/users/:id…` through only with `Authorization: Bearer <secret>` of user
 * `:id`: 401 without a well-formed bearer secret (checked first, before anything is read),
 * 404 when the user does not exist, 403 when the secret is not that user's (another user's, a
 * deleted user's, or none at all). The user's existence is public (`GET /users/:id`), so the
 * 404 reveals nothing a 403 would hide.
 *
 * The user ID never changes and the secret is never replaced, so the user the handler loads
 * again afterwards is the one checked here.
 */
@Injectable()
export class UserSecretGuard implements CanActivate {
  constructor(@InjectRepository(User) private readonly users: IRepository<string, User>) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    let secret: string;
    try {
      secret = bearerSecret(request.headers.authorization);
    } catch (err) {
      if (err instanceof MissingUserSecretError)
        http.getResponse<Response>().setHeader('WWW-Authenticate', err.challenge);
      throw err;
    }
    const id = String(request.params.id);
    const user = await this.find(id);
    if (!user) throw new NotFoundException(`user '${id}' does not exist`);
    if (!matchesUserSecret(secret, user.secretHash))
      throw new ForbiddenException(`this secret does not belong to user '${id}'`);
    return true;
  }

  private async find(id: string): Promise<User | null> {
    try {
      return await this.users.findById(id);
    } catch (err) {
      if (err instanceof InvalidAggregateIdError) return null;
      throw err;
    }
  }
}
