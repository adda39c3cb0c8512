import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { ApiHeader, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { Idempotent, type IdempotentOptions } from '@ddd-kit/idempotency';
import { ErrorBody } from '../common/error-body.dto.js';
import { RequestTransactionInterceptor } from './request-transaction.interceptor.js';

/**
 * A command that honours `Idempotency-Key` (SPEC §4): a repeat gets the first response again
 * and has no second effect. The request's transaction is opened outside the idempotency
 * interceptor, so the record joins it (see RequestTransactionInterceptor).
 *
 * Interceptors run in the order they are declared, and a method's decorators apply bottom-up:
 * write `@RequiresUserSecret()` *above* this one, so that the user's secret is checked inside
 * it — a repeat of a delete is answered from the record, not with a 404 for the user it deleted.
 */
export function IdempotentCommand(options: Pick<IdempotentOptions, 'secretFields'> = {}): MethodDecorator {
  return applyDecorators(
    UseInterceptors(RequestTransactionInterceptor),
    Idempotent(options),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'a Structured Field string, e.g. "8e03978e-40d5-43e8-bc93-6894a57f9324": a repeat (same request, same credentials) gets the first response again, with Idempotent-Replayed: true; while the first is still running, 409',
    }),
    ApiUnprocessableEntityResponse({
      description: 'this Idempotency-Key was already used for another request',
      type: ErrorBody,
    }),
  );
}
