import { applyDecorators, SetMetadata } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { IdempotencyArgumentError } from '../errors.js';
import { assertDuration } from '../idempotency.validation.js';
import { IDEMPOTENT_METADATA } from './idempotency.constants.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import type { IdempotentOptions } from './idempotency-module-options.interface.js';

/**
 * Marks a controller method (or every method of a controller) as honouring `Idempotency-Key`
 * (see IdempotencyInterceptor). Needs IdempotencyModule.forRoot in the application.
 *
 *   @Post() @Idempotent({ required: true, secretFields: ['secret'] })
 *   register(@Body() body: RegisterDto) { … }
 *
 * Its interceptor comes first among the interceptors bound where it is written, above or below
 * them: what the others do (a header set, a check that may refuse the request) is part of the
 * response a repeat gets again, and is not done again for it. An interceptor bound on the
 * controller or globally still runs around it.
 */
export function Idempotent(options: IdempotentOptions = {}): MethodDecorator & ClassDecorator {
  if (options === null || typeof options !== 'object')
    throw new IdempotencyArgumentError('@Idempotent: options must be an object');
  const { required, secretFields, ttlMs } = options;
  if (required !== undefined && typeof required !== 'boolean')
    throw new IdempotencyArgumentError('@Idempotent: required must be a boolean');
  if (secretFields !== undefined && (!Array.isArray(secretFields) || !secretFields.every((f) => typeof f === 'string')))
    throw new IdempotencyArgumentError('@Idempotent: secretFields must be an array of field names');
  if (ttlMs !== undefined) assertDuration(ttlMs, '@Idempotent: ttlMs');
  return applyDecorators(SetMetadata(IDEMPOTENT_METADATA, { ...options }), bindInterceptorFirst());
}

/**
 * `@UseInterceptors(IdempotencyInterceptor)`, but first in the list: decorators apply from the
 * bottom up and each `@UseInterceptors` appends, so an interceptor written below this decorator
 * would otherwise run outside it.
 */
function bindInterceptorFirst(): MethodDecorator & ClassDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const holder: object = descriptor === undefined ? target : (descriptor.value as object);
    const bound = (Reflect.getMetadata(INTERCEPTORS_METADATA, holder) as unknown[] | undefined) ?? [];
    Reflect.defineMetadata(
      INTERCEPTORS_METADATA,
      [IdempotencyInterceptor, ...bound.filter((interceptor) => interceptor !== IdempotencyInterceptor)],
      holder,
    );
  };
}
