import {
  ForbiddenException,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request } from 'express';
import { from, switchMap, type Observable } from 'rxjs';
import { missing, UsersService } from '../users/users.service.js';
import { bearerSecret } from './bearer-token.js';
import { matchesUserSecret } from './user-secret.js';

/**
 * The second half of `@RequiresUserSecret()`, after UserSecretGuard let a well-formed bearer
 * secret through: 404 when user `:id` does not exist (for an ID that cannot be one, without
 * asking the store); 403 when the secret is not that user's (another user's, a deleted user's,
 * or none at all). Still before the request's fields and If-Match are looked at (pipes run
 * after interceptors). The user's existence is public (`GET /users/:id`), so the 404 reveals
 * nothing a 403 would hide.
 *
 * An interceptor rather than a guard so that it runs inside the idempotency interceptor (which
 * `@Idempotent()` binds first among a route's interceptors): a repeat of a delete whose answer
 * was lost is answered from the record kept for these very credentials (checked then), not with
 * a 404 for the user it deleted.
 *
 * The user ID never changes and the secret is never replaced, so the user the handler loads
 * again afterwards is the one checked here.
 */
@Injectable()
export class UserSecretInterceptor implements NestInterceptor {
  constructor(private readonly users: UsersService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return from(this.check(context.switchToHttp().getRequest<Request>())).pipe(switchMap(() => next.handle()));
  }

  private async check(request: Request): Promise<void> {
    const secret = bearerSecret(request.headersDistinct.authorization);
    const id = String(request.params.id);
    const user = await this.users.find(id);
    if (!user) throw missing(id);
    if (!matchesUserSecret(secret, user.secretHash))
      throw new ForbiddenException(`this secret does not belong to user '${id}'`);
  }
}
