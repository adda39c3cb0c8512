import { applyDecorators, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorBody } from '../common/error-body.dto.js';
import { UserSecretGuard } from './user-secret.guard.js';
import { UserSecretInterceptor } from './user-secret.interceptor.js';

/** The OpenAPI name of the bearer scheme (see configure-app.ts). */
export const USER_SECRET_SCHEME = 'user-secret';

/** The route acts on user `:id` and needs that user's secret: 401 (the guard), 404 and 403 (the interceptor), and their OpenAPI description. */
export function RequiresUserSecret(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    UseGuards(UserSecretGuard),
    UseInterceptors(UserSecretInterceptor),
    ApiBearerAuth(USER_SECRET_SCHEME),
    ApiUnauthorizedResponse({
      description: 'no `Authorization: Bearer <secret>`, or not a well-formed secret',
      type: ErrorBody,
    }),
    ApiForbiddenResponse({ description: "the secret is not this user's", type: ErrorBody }),
  );
}
