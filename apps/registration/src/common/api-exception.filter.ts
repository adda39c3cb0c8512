import {
  BadRequestException,
  Catch,
  HttpException,
  Logger,
  ServiceUnavailableException,
  type ArgumentsHost,
} from '@nestjs/common';
import { DddKitExceptionFilter, dddKitHttpStatus } from '@ddd-kit/repository/http';
import { ConnectionWaitTimeoutError } from '../backends/postgres-pool.js';
import { loggableError } from './log-text.js';

/** Payload Too Large and Unsupported Media Type: how Nest reports a body the parser refused. */
const UNREADABLE_BODY = new Set([413, 415]);

/**
 * Where an error of a request becomes its answer, for every route: the library's
 * DddKitExceptionFilter (ddd-kit's errors as 400, 409, 422 and 503, in Nest's shape, with
 * messages that name nothing of the server), with 412 for a lost optimistic lock since this API
 * takes the version in If-Match, and what this app adds:
 *
 * - bad input is always a 400: a body over the parser's limit (413) or in an unsupported charset
 *   (415) is answered as one;
 * - no free database connection in time is a 503 that says so (nothing was sent: retry as it is);
 * - any other error is a store's or a driver's whose outcome is unknown (a write whose reply was
 *   lost, a connection that failed): a 503, and the client reads the user again before retrying.
 *
 * Each 5xx is logged once, its text escaped (a driver's message may quote the request); the
 * client reads none of it.
 */
@Catch()
export class ApiExceptionFilter extends DddKitExceptionFilter {
  protected override readonly optimisticLockStatus = 412;
  private readonly logger = new Logger('ApiExceptionFilter');

  override catch(exception: unknown, host: ArgumentsHost): void {
    super.catch(this.ofThisApp(exception), host);
  }

  /** `exception` as DddKitExceptionFilter is to answer it. */
  private ofThisApp(exception: unknown): unknown {
    if (exception instanceof HttpException) {
      if (!UNREADABLE_BODY.has(exception.getStatus())) return exception;
      // The limit in force is the parser's (16 KB when configureApp() installed it).
      return new BadRequestException(exception.getStatus() === 413 ? 'request body is too large' : exception.message);
    }
    if (exception instanceof ConnectionWaitTimeoutError) {
      this.logger.warn(`503: ${loggableError(exception).message}`);
      return new ServiceUnavailableException(exception.message);
    }
    const status = dddKitHttpStatus(exception, this.optimisticLockStatus);
    if (status === undefined) {
      const { message, stack } = loggableError(exception);
      this.logger.error(message, stack);
      return new ServiceUnavailableException(
        'a store did not answer or confirm this request; read the user again before retrying',
      );
    }
    // An outage (a store away, a machine ID that cannot be vouched for): a warning, without the stack.
    if (status >= 500) this.logger.warn(`${status}: ${loggableError(exception).message}`);
    return exception;
  }
}
