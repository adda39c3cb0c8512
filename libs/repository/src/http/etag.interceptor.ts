import {
  applyDecorators,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { map, type Observable } from 'rxjs';
import { etagOf } from './if-match.js';

const ETAG_VERSION = Symbol('ddd-kit:etag-version');

/** Reads the version from what the handler returned; default: its `version` field. */
export type ETagVersionOf = (result: any) => unknown;

const versionField: ETagVersionOf = (result) => (result as { version?: unknown } | null)?.version;

/** The parts of an Express or Fastify reply that setting a header needs. */
interface HeaderResponse {
  headersSent?: boolean;
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
}

/**
 * Sets `ETag: "<version>"` on the response from the result of a handler marked `@ETag()`, when
 * that version is a whole number (a result without one sets nothing).
 */
@Injectable()
export class ETagInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const versionOf = this.reflector.get<ETagVersionOf | undefined>(ETAG_VERSION, context.getHandler()) ?? versionField;
    const response = context.switchToHttp().getResponse<HeaderResponse>();
    return next.handle().pipe(
      map((result: unknown) => {
        const version = versionOf(result);
        if (Number.isSafeInteger(version) && (version as number) >= 0 && response.headersSent !== true) {
          if (typeof response.setHeader === 'function') response.setHeader('ETag', etagOf(version as number));
          else response.header?.('ETag', etagOf(version as number));
        }
        return result;
      }),
    );
  }
}

/**
 * Sends the aggregate's version as the response's `ETag` (`"3"`, what `@IfMatch()` reads back),
 * taken from the handler's result: its `version` field, or what `versionOf` reads.
 *
 *   @Get(':id') @ETag() get(@Param('id') id: string): Promise<UserView> { ... }
 *
 * With `@Idempotent()` of @ddd-kit/idempotency, in either order, a repeat gets the header again:
 * declared above it (running inside it), the header is kept with the first response; below it,
 * it is set again from the replayed result.
 */
export function ETag(versionOf?: ETagVersionOf): MethodDecorator {
  return applyDecorators(
    ...(versionOf === undefined ? [] : [SetMetadata(ETAG_VERSION, versionOf)]),
    UseInterceptors(ETagInterceptor),
  );
}
