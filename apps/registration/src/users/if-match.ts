import { BadRequestException, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/**
 * The version a client last saw, from `If-Match`: `3`, `"3"` or `W/"3"` (the ETag this API
 * sends is `"<version>"`), given every `If-Match` header the request carried. Absent: undefined,
 * or bad input when `required`. Sent empty, or more than once: bad input, on every route — an
 * empty or doubled precondition is a client's mistake, never "no precondition". A mismatch is
 * the caller's 412.
 */
export function parseIfMatch(headers: readonly string[] | undefined, required: boolean): number | undefined {
  if (headers === undefined || headers.length === 0) {
    if (required)
      throw new BadRequestException(
        'If-Match header with the user\'s current version is required (e.g. If-Match: "1")',
      );
    return undefined;
  }
  if (headers.length > 1) throw new BadRequestException('send one If-Match header, not several');
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(headers[0]);
  if (!match) throw new BadRequestException(`If-Match must be one version number such as "1", got '${headers[0]}'`);
  return Number(match[1]);
}

/** The handler's `If-Match` version (see parseIfMatch); `{ required: true }` makes it mandatory. */
export const IfMatch = createParamDecorator(
  (options: { required: boolean } | undefined, context: ExecutionContext): number | undefined =>
    parseIfMatch(context.switchToHttp().getRequest<Request>().headersDistinct['if-match'], options?.required ?? false),
);

export const etagOf = (version: number): string => `"${version}"`;
