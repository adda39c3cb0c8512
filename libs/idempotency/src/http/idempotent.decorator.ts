import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
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
  return applyDecorators(SetMetadata(IDEMPOTENT_METADATA, { ...options }), UseInterceptors(IdempotencyInterceptor));
}
