import { BadRequestException, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';

/** The `@IfMatch()` options. */
export interface IfMatchOptions {
  /** Whether the route requires the header: absent, it is then a 400. Default false (absent: `undefined`). */
  required?: boolean;
}

/** One version, as the ETag of `etagOf` carries it: `3`, `"3"` or `W/"3"`. */
const VERSION = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/;

/**
 * The version a client last read, from its `If-Match` header lines (Node's `headersDistinct`:
 * one string per line): `3`, `"3"` or `W/"3"`, as `etagOf` sends it. Absent: `undefined`, or a
 * 400 when `required`. Empty, sent more than once, a list, `*` or anything but one version: a
 * 400 on every route — a mangled precondition is the client's mistake, never "no precondition".
 * Whether the version is still the stored one is the repository's to say, in its write
 * (`update(aggregate, { expectedVersion })`).
 */
export function parseIfMatch(lines: readonly string[] | string | undefined, required = false): number | undefined {
  const given = typeof lines === 'string' ? [lines] : (lines ?? []);
  if (given.length === 0) {
    if (required)
      throw new BadRequestException('this request requires If-Match with the version last read (e.g. If-Match: "1")');
    return undefined;
  }
  if (given.length > 1) throw new BadRequestException('send one If-Match header, not several');
  const match = VERSION.exec(given[0]);
  if (match === null) throw new BadRequestException('If-Match must be one version, such as "1"');
  return Number(match[1]);
}

/** What the decorator reads of a request: Express's (Node's own) or Fastify's (`raw`). */
interface RequestWithHeaders {
  headers?: IncomingHttpHeaders;
  headersDistinct?: Record<string, string[] | undefined>;
  raw?: RequestWithHeaders;
}

function ifMatchLines(request: RequestWithHeaders): readonly string[] | string | undefined {
  const node = request.raw ?? request;
  // headersDistinct keeps repeated lines apart; `headers` joins them with ', ', which parses as
  // no single version either.
  return node.headersDistinct?.['if-match'] ?? node.headers?.['if-match'];
}

/**
 * The handler's expected version, from `If-Match` (see parseIfMatch): a number, or `undefined`
 * when the header is absent and the route allows that. Pass it to the write, which answers a
 * stale one with OptimisticLockError (412 through DddKitExceptionFilter's `optimisticLockStatus`):
 *
 * ```ts
 * @Patch(':id')
 * @ETag()
 * async rename(@Param('id') id: string, @IfMatch({ required: true }) expectedVersion: number) {
 *   const user = await this.users.findById(id);
 *   if (!user) throw new NotFoundException();
 *   user.rename(...);
 *   await this.users.update(user, { expectedVersion });
 *   return user.toView();
 * }
 * ```
 */
export const IfMatch: (options?: IfMatchOptions) => ParameterDecorator = createParamDecorator(
  (options: IfMatchOptions | undefined, context: ExecutionContext): number | undefined =>
    parseIfMatch(ifMatchLines(context.switchToHttp().getRequest<RequestWithHeaders>()), options?.required ?? false),
);

/** The ETag of an aggregate's version: `"3"` (what `@IfMatch()` reads back). */
export function etagOf(version: number): string {
  return `"${version}"`;
}
