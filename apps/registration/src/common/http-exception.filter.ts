import {
  ArgumentsHost,
  BadRequestException,
  Catch,
  HttpException,
  InternalServerErrorException,
  Logger,
  ServiceUnavailableException,
} from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { OperationTimeoutError, PrepareKeyDataLostError } from '@ddd-kit/prepare-key';
import { dddKitErrorCode } from '@ddd-kit/core';
import { isPostgresUnreachable } from '@ddd-kit/core/postgres';
import { ConnectionWaitTimeoutError } from '../backends/postgres-pool.js';
import { loggableError } from './log-text.js';

/** Payload Too Large and Unsupported Media Type: how Nest reports a body the parser refused. */
const UNREADABLE_BODY = new Set([413, 415]);

/**
 * The machine ID cannot be vouched for right now: its lease ran out while the store was away,
 * another instance took it, the store did not answer, or the app is shutting down. No ID was
 * issued; the next request (here once the lease is renewed, or on another instance) can succeed.
 */
const MACHINE_ID_UNAVAILABLE = new Set([
  'MACHINE_ID_LEASE_EXPIRED',
  'MACHINE_ID_LOST',
  'MACHINE_ID_STORE',
  'MACHINE_ID_RELEASED',
]);

/** Why a request got a 503 for a store that was away, as the client reads it. */
const STORE_UNAVAILABLE = 'a store the service needs is unavailable (restarting or unreachable); retry later';

/**
 * Bad input is always a 400 with a message. Nest's Express adapter already turns body-parser
 * failures into HttpExceptions (malformed JSON is a 400); a body over the limit (413) or in an
 * unsupported charset (415) is rewritten as a 400 here. No free database connection in time is a
 * 503 that says so, and so is PostgreSQL restarting or out of reach (`isPostgresUnreachable`: a
 * refused or ended connection, 57P01/57P02/57P03) or a machine-ID lease that cannot be vouched for. An unexpected error is logged once, its text escaped (it may quote the
 * request), and answered with a bare 500; everything else is Nest's default handling.
 */
@Catch()
export class HttpErrorFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('HttpErrorFilter');

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (exception instanceof HttpException && UNREADABLE_BODY.has(exception.getStatus())) {
      // The limit in force is the parser's (16 KB when configureApp() installed it).
      const reason = exception.getStatus() === 413 ? 'request body is too large' : exception.message;
      return super.catch(new BadRequestException(reason), host);
    }
    if (exception instanceof HttpException) return super.catch(exception, host);
    // Every database connection stayed busy: nothing was sent, the client may retry.
    if (exception instanceof ConnectionWaitTimeoutError)
      return super.catch(new ServiceUnavailableException(exception.message), host);
    // A store did not answer within a ddd-kit operation's deadline: an outage, retry later.
    if (exception instanceof OperationTimeoutError)
      return super.catch(new ServiceUnavailableException(exception.message), host);
    // The reservations' store lost its data and is being refilled from the users: retry later.
    if (exception instanceof PrepareKeyDataLostError)
      return super.catch(new ServiceUnavailableException(exception.message), host);
    // PostgreSQL restarting or out of reach, or a machine ID the app cannot vouch for meanwhile:
    // an outage, not a fault of the service. Logged as a warning, without the stack.
    if (isPostgresUnreachable(exception) || MACHINE_ID_UNAVAILABLE.has(dddKitErrorCode(exception) ?? '')) {
      this.logger.warn(`503: ${loggableError(exception).message}`);
      return super.catch(new ServiceUnavailableException(STORE_UNAVAILABLE), host);
    }
    // Not passed on as it is: Nest's default handling would log it again, unescaped.
    const { message, stack } = loggableError(exception);
    this.logger.error(message, stack);
    return super.catch(new InternalServerErrorException(), host);
  }
}
