import {
  BadRequestException,
  Catch,
  ConflictException,
  HttpException,
  HttpStatus,
  PreconditionFailedException,
  ServiceUnavailableException,
  UnprocessableEntityException,
  type ArgumentsHost,
  type HttpExceptionOptions,
} from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { dddKitErrorCode } from '@ddd-kit/core';
import { isPostgresUnreachable } from '@ddd-kit/core/postgres';

/**
 * The HTTP status of each ddd-kit error a request may meet, by its stable `code` (so it holds for
 * the errors of every ddd-kit package, and of any installed copy of one). Any other error —
 * driver errors, configuration errors — has none: a 500 stays a 500, but for PostgreSQL out of
 * reach (`isPostgresUnreachable`), an outage: 503. `OPTIMISTIC_LOCK` is not here: its status is
 * the caller's (409 or 412). The table for users is libs/repository/docs/http.md, which
 * test/docs/http-status-table.spec.ts compares with this map. Not a public export.
 */
export const STATUS_BY_CODE: Readonly<Record<string, number>> = {
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

/**
 * The HTTP status of a ddd-kit error (STATUS_BY_CODE; `OPTIMISTIC_LOCK`: `optimisticLockStatus`),
 * 503 for PostgreSQL out of reach, or undefined for any other error. The table, with each error's
 * class: libs/repository/docs/http.md.
 */
export function dddKitHttpStatus(
  error: unknown,
  optimisticLockStatus: 409 | 412 = HttpStatus.CONFLICT,
): number | undefined {
  const code = dddKitErrorCode(error);
  if (code === undefined) return isPostgresUnreachable(error) ? HttpStatus.SERVICE_UNAVAILABLE : undefined;
  return code === 'OPTIMISTIC_LOCK' ? optimisticLockStatus : STATUS_BY_CODE[code];
}

/** What a client reads for each ddd-kit error: its public facts only, never a method, class or store of ours. */
type Described = {
  aggregate?: unknown;
  id?: unknown;
  expectedVersion?: unknown;
  currentVersion?: unknown;
  name?: unknown;
  key?: unknown;
};

const STORE_UNAVAILABLE = 'a store the service needs is unavailable (restarting or unreachable); retry later';

/** `"abc"` for an id, cut short: a message never echoes a long or hostile value in full. */
function idText(id: unknown): string {
  const text = typeof id === 'string' || typeof id === 'number' ? JSON.stringify(id) : undefined;
  if (text === undefined) return '';
  return ` ${text.length > 66 ? `${text.slice(0, 65)}…"` : text}`;
}

function clientMessage(code: string | undefined, error: Described): string {
  const aggregate = typeof error.aggregate === 'string' ? error.aggregate : 'the resource';
  const subject = `${aggregate}${idText(error.id)}`;
  switch (code) {
    case 'INVALID_AGGREGATE_ID':
      return `${aggregate} id is not valid`;
    case 'PREPARE_KEY_ARGUMENT':
      return 'a value of the request cannot be used as a key (empty, too long, or holding characters that cannot be stored)';
    case 'UNIQUE_KEY_VIOLATION':
      return `the ${String(error.name)} '${String(error.key)}' is already taken`;
    case 'DUPLICATE_AGGREGATE':
      return `${subject} already exists`;
    case 'OPTIMISTIC_LOCK':
      // The version it is at, when the write knew it (a version the client stated, for an aggregate read at another).
      return typeof error.currentVersion === 'number'
        ? `${subject} is at version ${error.currentVersion}, not ${String(error.expectedVersion)}: read it again`
        : `${subject} is not at version ${String(error.expectedVersion)}: it was changed or deleted; read it again`;
    case 'AGGREGATE_STATE':
      return `${subject} cannot be changed in its current state`;
    case 'PREPARE_KEY_STATE':
      return 'a key this request relies on changed meanwhile; read again and retry';
    case 'IDEMPOTENCY_IN_PROGRESS':
      return 'a request with this idempotency key is still being processed; retry later';
    case 'IDEMPOTENCY_CONFLICT':
      return 'this idempotency key was already used for another request';
    case 'PREPARE_KEY_DATA_LOST':
      return 'the service is restoring its data; retry later';
    case 'MACHINE_ID_LEASE_EXPIRED':
    case 'MACHINE_ID_LOST':
    case 'MACHINE_ID_STORE':
    case 'MACHINE_ID_RELEASED':
      return 'the service cannot issue identifiers right now; retry later';
    default: // PG_CONNECTION, OPERATION_TIMEOUT, a driver error of PostgreSQL out of reach
      return STORE_UNAVAILABLE;
  }
}

/** Nest's own exception of each status this mapping answers, so that bodies are exactly Nest's. */
const EXCEPTION_BY_STATUS: Readonly<
  Record<number, new (message: string, options: HttpExceptionOptions) => HttpException>
> = {
  [HttpStatus.BAD_REQUEST]: BadRequestException,
  [HttpStatus.CONFLICT]: ConflictException,
  [HttpStatus.PRECONDITION_FAILED]: PreconditionFailedException,
  [HttpStatus.UNPROCESSABLE_ENTITY]: UnprocessableEntityException,
  [HttpStatus.SERVICE_UNAVAILABLE]: ServiceUnavailableException,
};

/**
 * The HttpException a ddd-kit error stands for (see dddKitHttpStatus), or undefined for any other
 * error: Nest's own exception of that status (`ConflictException`, …), whose body is Nest's
 * `{ message, error, statusCode }`, with a message for HTTP clients that names nothing of the
 * server's code or stores (the error itself is its `cause`, for logs).
 */
export function dddKitHttpException(
  error: unknown,
  optimisticLockStatus: 409 | 412 = HttpStatus.CONFLICT,
): HttpException | undefined {
  const status = dddKitHttpStatus(error, optimisticLockStatus);
  if (status === undefined) return undefined;
  const message = clientMessage(dddKitErrorCode(error), error as Described);
  return new EXCEPTION_BY_STATUS[status](message, { cause: error });
}

/**
 * Optional: turns the ddd-kit errors of `dddKitHttpStatus` into HTTP answers exactly as Nest's
 * own exceptions answer (`{ message, error, statusCode }`, see dddKitHttpException); everything
 * else is handled exactly as Nest's default would (HttpExceptions as given, anything unknown a
 * 500). HTTP only.
 *
 *   providers: [{ provide: APP_FILTER, useClass: DddKitExceptionFilter }]
 *
 * For 412 on a lost optimistic lock (an API that takes `If-Match`), subclass it:
 * `@Catch() class ApiFilter extends DddKitExceptionFilter { protected override readonly optimisticLockStatus = 412 }`.
 * An application with its own catch-all filter calls `dddKitHttpException(error)` from it instead.
 */
@Catch()
export class DddKitExceptionFilter extends BaseExceptionFilter {
  protected readonly optimisticLockStatus: 409 | 412 = HttpStatus.CONFLICT;

  override catch(exception: unknown, host: ArgumentsHost): void {
    return super.catch(dddKitHttpException(exception, this.optimisticLockStatus) ?? exception, host);
  }
}
