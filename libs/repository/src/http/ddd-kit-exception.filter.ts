import { Catch, HttpException, HttpStatus, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { dddKitErrorCode } from '@ddd-kit/core';
import { isPostgresUnreachable } from '@ddd-kit/core/postgres';

/**
 * The HTTP status of each ddd-kit error a request may meet, by its stable `code` (so it holds for
 * the errors of every ddd-kit package, and of any installed copy of one). Any other error —
 * driver errors, configuration errors — has none: a 500 stays a 500, but for PostgreSQL out of
 * reach (`isPostgresUnreachable`), an outage: 503.
 */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  INVALID_AGGREGATE_ID: HttpStatus.BAD_REQUEST,
  PREPARE_KEY_ARGUMENT: HttpStatus.BAD_REQUEST,
  UNIQUE_KEY_VIOLATION: HttpStatus.CONFLICT,
  DUPLICATE_AGGREGATE: HttpStatus.CONFLICT,
  AGGREGATE_STATE: HttpStatus.CONFLICT,
  PREPARE_KEY_STATE: HttpStatus.CONFLICT,
  IDEMPOTENCY_IN_PROGRESS: HttpStatus.CONFLICT,
  IDEMPOTENCY_CONFLICT: HttpStatus.UNPROCESSABLE_ENTITY,
  PG_CONNECTION: HttpStatus.SERVICE_UNAVAILABLE,
  PREPARE_KEY_DATA_LOST: HttpStatus.SERVICE_UNAVAILABLE,
  OPERATION_TIMEOUT: HttpStatus.SERVICE_UNAVAILABLE,
  // The machine ID cannot be vouched for meanwhile (its store away, its lease run out, taken
  // over, or the app shutting down): no ID was issued, a retry may succeed.
  MACHINE_ID_LEASE_EXPIRED: HttpStatus.SERVICE_UNAVAILABLE,
  MACHINE_ID_LOST: HttpStatus.SERVICE_UNAVAILABLE,
  MACHINE_ID_STORE: HttpStatus.SERVICE_UNAVAILABLE,
  MACHINE_ID_RELEASED: HttpStatus.SERVICE_UNAVAILABLE,
};

/** What a client reads for a driver error that says PostgreSQL is away (its own text names hosts). */
const POSTGRES_UNAVAILABLE = 'PostgreSQL is unavailable (restarting or unreachable); retry later';

/**
 * The HTTP status of a ddd-kit error, or undefined for any other error.
 *
 * | code | status |
 * |---|---|
 * | `INVALID_AGGREGATE_ID`, `PREPARE_KEY_ARGUMENT` | 400 Bad Request |
 * | `UNIQUE_KEY_VIOLATION` (the value is taken), `DUPLICATE_AGGREGATE` | 409 Conflict |
 * | `OPTIMISTIC_LOCK` | 409 Conflict (`optimisticLockStatus`: 412 when the client sent the version in `If-Match`) |
 * | `AGGREGATE_STATE` (e.g. a write to a deleted aggregate), `PREPARE_KEY_STATE`, `IDEMPOTENCY_IN_PROGRESS` | 409 Conflict |
 * | `IDEMPOTENCY_CONFLICT` (a key reused for another request) | 422 Unprocessable Entity |
 * | `PREPARE_KEY_DATA_LOST` (the reservations are being restored into a wiped store) | 503 Service Unavailable |
 * | `OPERATION_TIMEOUT` (a store did not answer within the operation deadline) | 503 Service Unavailable |
 * | `PG_CONNECTION` (PostgreSQL did not answer), a driver error of PostgreSQL out of reach (a refused or ended connection, 57P01/57P02/57P03) | 503 Service Unavailable |
 * | `MACHINE_ID_LEASE_EXPIRED`, `MACHINE_ID_LOST`, `MACHINE_ID_STORE`, `MACHINE_ID_RELEASED` (no ID can be issued now) | 503 Service Unavailable |
 */
export function dddKitHttpStatus(
  error: unknown,
  optimisticLockStatus: 409 | 412 = HttpStatus.CONFLICT,
): number | undefined {
  const code = dddKitErrorCode(error);
  if (code === undefined) return isPostgresUnreachable(error) ? HttpStatus.SERVICE_UNAVAILABLE : undefined;
  return code === 'OPTIMISTIC_LOCK' ? optimisticLockStatus : STATUS_BY_CODE[code];
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
    const message = dddKitErrorCode(exception) === undefined ? POSTGRES_UNAVAILABLE : (exception as Error).message;
    const body = { statusCode: status, message, error: HTTP_REASON[status] };
    return super.catch(new HttpException(body, status, { cause: exception }), host);
  }
}

const HTTP_REASON: Record<number, string> = {
  400: 'Bad Request',
  409: 'Conflict',
  412: 'Precondition Failed',
  422: 'Unprocessable Entity',
  503: 'Service Unavailable',
};
