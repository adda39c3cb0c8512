import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { Idempotent, type IdempotentOptions } from '@ddd-kit/idempotency';
import { ErrorBody } from '../common/error-body.dto.js';

/**
 * A command that honours `Idempotency-Key` (SPEC §4): `@Idempotent()`, and its description in
 * the OpenAPI document. A repeat gets the first response again and has no second effect; the
 * route's other interceptors (the user's secret, its ETag) run inside, wherever they are written.
 */
export function IdempotentCommand(options: Pick<IdempotentOptions, 'secretFields'> = {}): MethodDecorator {
  return applyDecorators(
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
