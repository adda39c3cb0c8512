import { Catch, HttpException, HttpStatus, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { AggregateStateError } from '../errors/aggregate-state.error.js';
import { DuplicateAggregateError } from '../errors/duplicate-aggregate.error.js';
import { InvalidAggregateIdError } from '../errors/invalid-aggregate-id.error.js';
import { OptimisticLockError } from '../errors/optimistic-lock.error.js';
import { UniqueKeyViolationError } from '../errors/unique-key-violation.error.js';

// @ddd-kit/prepare-key is an optional peer: its errors are told apart by the name they set,
// so this file never loads it.
const PREPARE_KEY_BAD_ARGUMENT = 'PrepareKeyArgumentError';
const PREPARE_KEY_STATE = 'PrepareKeyStateError';

/**
 * The HTTP status of a ddd-kit error a request may meet, or undefined for any other error
 * (driver errors, configuration errors: a 500 stays a 500).
 *
 * | error | status |
 * |---|---|
 * | `InvalidAggregateIdError`, `PrepareKeyArgumentError` | 400 Bad Request |
 * | `UniqueKeyViolationError` (the value is taken), `DuplicateAggregateError` | 409 Conflict |
 * | `OptimisticLockError` | 409 Conflict (`optimisticLockStatus`: 412 when the client sent the version in `If-Match`) |
 * | `AggregateStateError` (e.g. a write to a deleted aggregate), `PrepareKeyStateError` | 409 Conflict |
 */
export function dddKitHttpStatus(
  error: unknown,
  optimisticLockStatus: 409 | 412 = HttpStatus.CONFLICT,
): number | undefined {
  if (error instanceof InvalidAggregateIdError) return HttpStatus.BAD_REQUEST;
  if (error instanceof OptimisticLockError) return optimisticLockStatus;
  if (
    error instanceof UniqueKeyViolationError ||
    error instanceof DuplicateAggregateError ||
    error instanceof AggregateStateError
  ) {
    return HttpStatus.CONFLICT;
  }
  if (error instanceof Error && error.name === PREPARE_KEY_BAD_ARGUMENT) return HttpStatus.BAD_REQUEST;
  if (error instanceof Error && error.name === PREPARE_KEY_STATE) return HttpStatus.CONFLICT;
  return undefined;
}

/**
 * Optional: turns the ddd-kit errors of `dddKitHttpStatus` into HTTP answers in Nest's usual
 * shape (`{ statusCode, message, error }`, the message the library's own); everything else is
 * handled exactly as Nest's default would (HttpExceptions as given, anything unknown a 500).
 * HTTP only.
 *
 *   providers: [{ provide: APP_FILTER, useClass: DddKitExceptionFilter }]
 *
 * For 412 on a lost optimistic lock (an API that takes `If-Match`), subclass it:
 * `@Catch() class ApiFilter extends DddKitExceptionFilter { protected override readonly optimisticLockStatus = 412 }`.
 * An application with its own catch-all filter calls `dddKitHttpStatus(error)` from it instead.
 */
@Catch()
export class DddKitExceptionFilter extends BaseExceptionFilter {
  protected readonly optimisticLockStatus: 409 | 412 = HttpStatus.CONFLICT;

  override catch(exception: unknown, host: ArgumentsHost): void {
    const status = dddKitHttpStatus(exception, this.optimisticLockStatus);
    if (status === undefined) return super.catch(exception, host);
    const message = (exception as Error).message;
    const body = { statusCode: status, message, error: HTTP_REASON[status] };
    return super.catch(new HttpException(body, status, { cause: exception }), host);
  }
}

const HTTP_REASON: Record<number, string> = { 400: 'Bad Request', 409: 'Conflict', 412: 'Precondition Failed' };
