import { ArgumentsHost, BadRequestException, Catch, HttpException, Logger } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';

export const BODY_LIMIT_BYTES = 16 * 1024;
/** Payload Too Large and Unsupported Media Type, as Nest reports body-parser failures. */
const UNREADABLE_BODY = new Set([413, 415]);

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/**
 * Bad input is always a 400 with a message: body-parser's own failures (malformed JSON, a
 * body over the limit, an unsupported charset or encoding) are rewritten as such instead of
 * leaking as 413/415/500. Everything else is Nest's default handling.
 */
@Catch()
export class HttpErrorFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('HttpErrorFilter');

  override catch(exception: unknown, host: ArgumentsHost): void {
    const err = exception as BodyParserError;
    if (exception instanceof HttpException && UNREADABLE_BODY.has(exception.getStatus())) {
      const reason = exception.getStatus() === 413 ? `request body is too large (limit ${BODY_LIMIT_BYTES} bytes)` : exception.message;
      return super.catch(new BadRequestException(reason), host);
    }
    if (!(exception instanceof HttpException) && typeof err?.type === 'string') {
      const message =
        err.type === 'entity.too.large'
          ? `request body is too large (limit ${err.limit ?? 'exceeded'} bytes)`
          : err.type === 'entity.parse.failed'
            ? 'request body is not valid JSON'
            : `request body cannot be read (${err.type})`;
      return super.catch(new BadRequestException(message), host);
    }
    if (!(exception instanceof HttpException)) this.logger.error(exception);
    return super.catch(exception, host);
  }
}

