import {
  HttpException,
  Injectable,
  Logger,
  ServiceUnavailableException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { ConnectionWaitTimeoutError } from '../backends/postgres-pool.js';
import { loggableError, logText } from '../common/log-text.js';
import { RequestTransaction } from './request-transaction.js';

/**
 * Opens the request's one transaction (RequestTransaction: on PostgreSQL a real one, elsewhere
 * none) around everything inside it, the idempotency record above all: on PostgreSQL the
 * record of a command commits or rolls back with the user row and the reservation, so "done"
 * and "recorded" cannot come apart. UsersService's own transactions join it. A failure to open
 * or commit it is a 503, as UsersService answers for its own; a wait for a free connection that
 * ran out is the 503 that names it.
 */
@Injectable()
export class RequestTransactionInterceptor implements NestInterceptor {
  private readonly logger = new Logger('RequestTransaction');

  constructor(private readonly transaction: RequestTransaction) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // next.handle() inside run(): Nest binds the handler chain to the async context it is called in.
    return from(
      this.transaction
        .run(() => lastValueFrom(next.handle(), { defaultValue: undefined }))
        .catch((err: unknown) => Promise.reject(this.unavailable(err, context))),
    );
  }

  private unavailable(err: unknown, context: ExecutionContext): unknown {
    // Answered as they are: an HttpException, or no free connection to begin with (a 503 that
    // says so: nothing was sent, the client may retry).
    if (err instanceof HttpException || err instanceof ConnectionWaitTimeoutError) return err;
    const { method, path } = context.switchToHttp().getRequest<{ method: string; path: string }>();
    const { message, stack } = loggableError(err);
    this.logger.error(`${logText(`${method} ${path}`)} failed: ${message}`, stack);
    return new ServiceUnavailableException('the store did not answer; read the user again before retrying');
  }
}
