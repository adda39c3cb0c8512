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
import { dddKitHttpException } from '@ddd-kit/repository/http';
import { ConnectionWaitTimeoutError } from '../backends/postgres-pool.js';
import { loggableError } from './log-text.js';

/** Payload Too Large and Unsupported Media Type: how Nest reports a body the parser refused. */
const UNREADABLE_BODY = new Set([413, 415]);

/**
 * Bad input is always a 400 with a message. Nest's Express adapter already turns body-parser
 * failures into HttpExceptions (malformed JSON is a 400); a body over the limit (413) or in an
 * unsupported charset (415) is rewritten as a 400 here. No free database connection in time is a
 * 503 that says so, and so is every ddd-kit outage, as `dddKitHttpException` answers it. An
 * unexpected error is logged once, its text escaped (it may quote the request), and answered
 * with a bare 500; everything else is Nest's default handling.
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
    // A store away (PostgreSQL restarting or out of reach, no answer within a ddd-kit
    // operation's deadline, reservations being restored into a store that lost them) or a
    // machine ID that cannot be vouched for meanwhile: an outage, not a fault of the service.
    // Logged as a warning, without the stack; the client reads why, not the driver's text.
    const outage = dddKitHttpException(exception);
    if (outage?.getStatus() === 503) {
      this.logger.warn(`503: ${loggableError(exception).message}`);
      return super.catch(outage, host);
    }
    // Not passed on as it is: Nest's default handling would log it again, unescaped.
    const { message, stack } = loggableError(exception);
    this.logger.error(message, stack);
    return super.catch(new InternalServerErrorException(), host);
  }
}
