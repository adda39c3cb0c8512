import {
  BadRequestException,
  CallHandler,
  ConflictException,
  ExecutionContext,
  Inject,
  Injectable,
  InternalServerErrorException,
  NestInterceptor,
  UnprocessableEntityException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { IdempotencyConflictError, IdempotencyInProgressError, IdempotencyResultUnreadableError } from '../errors.js';
import { IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENT_METADATA, REPLAYED_HEADER } from './idempotency.constants.js';
import type { ResolvedIdempotencyOptions } from './idempotency-module.options.js';
import type { IdempotentOptions, IdempotentRequest } from './idempotency-module-options.interface.js';
import { requestIdentity } from './request-identity.js';
import { seal, unseal, type SealingContext } from './sealed-fields.js';
import { splitSecretFields, type StoredResponse } from './stored-response.js';
import { parseIdempotencyKey } from './structured-field.js';

/** The parts of an Express or Fastify reply the interceptor uses. */
interface IdempotentResponse {
  statusCode: number;
  status?: (code: number) => unknown;
  code?: (code: number) => unknown;
  getHeader(name: string): number | string | string[] | undefined;
  /** Node's (Express's) response: the names of the headers set, in the case they were set in. */
  getRawHeaderNames?(): string[];
  setHeader?(name: string, value: string | string[]): unknown;
  header?(name: string, value: string | string[]): unknown;
}

/**
 * The HTTP semantics of a route marked `@Idempotent()` (IETF draft "The Idempotency-Key HTTP
 * Header Field"): the handler runs once per (caller, key) while the key is retained; a repeat
 * gets the first response again — status, body, the headers that matter — with
 * `Idempotent-Replayed: true`. Same key with another request: 422; the first still running: 409;
 * a malformed key, or none where required: 400. A handler that fails keeps nothing.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: ResolvedIdempotencyOptions,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const route =
      this.reflector.getAllAndOverride<IdempotentOptions | undefined>(IDEMPOTENT_METADATA, [
        context.getHandler(),
        context.getClass(),
      ]) ?? {};
    const request = context.switchToHttp().getRequest<IdempotentRequest>();
    const response = context.switchToHttp().getResponse<IdempotentResponse>();
    const { header, headerName } = this.options;

    const raw = request.headers[header];
    if (raw === undefined) {
      if (route.required) throw new BadRequestException(`the ${headerName} header is required on this request`);
      return next.handle();
    }
    const parsed = parseIdempotencyKey(Array.isArray(raw) ? raw.join(', ') : raw);
    if ('error' in parsed) throw new BadRequestException(`the ${headerName} header ${parsed.error}`);

    const secretFields = route.secretFields ?? [];
    const secret = this.options.encryptionKey;
    if (secretFields.length > 0 && secret === undefined) {
      // Caught at start-up (IdempotencyStoreLifecycle); here only for a route it could not see.
      throw new Error(
        'IdempotencyModule: a route names secretFields but the module has no encryptionKey; set IdempotencyModule.forRoot({ encryptionKey })',
      );
    }
    const credential = this.options.caller(request) ?? '';
    let identity: { storeKey: string; fingerprint: string };
    try {
      identity = requestIdentity({
        key: parsed.key,
        credential,
        method: request.method ?? 'GET',
        path: request.originalUrl ?? request.url ?? '',
        body: request.body,
      });
    } catch {
      throw new BadRequestException(
        'the request body cannot be compared with a repeat (not JSON, or nested too deeply)',
      );
    }
    const sealing: SealingContext | undefined =
      secret === undefined ? undefined : { secret, credential, key: parsed.key, fingerprint: identity.fingerprint };

    return from(this.handle(next, response, route, identity, secretFields, sealing));
  }

  private async handle(
    next: CallHandler,
    response: IdempotentResponse,
    route: IdempotentOptions,
    identity: { storeKey: string; fingerprint: string },
    secretFields: readonly string[],
    sealing: SealingContext | undefined,
  ): Promise<unknown> {
    let workFailed = false;
    let body: unknown;
    let outcome: { result: StoredResponse; replayed: boolean };
    try {
      outcome = await this.options.store.run<StoredResponse>(
        { key: identity.storeKey, fingerprint: identity.fingerprint, ttlMs: route.ttlMs ?? this.options.ttlMs },
        async () => {
          try {
            body = await lastValueFrom(next.handle(), { defaultValue: undefined });
          } catch (error) {
            workFailed = true;
            throw error;
          }
          return this.toStored(response, body, secretFields, sealing);
        },
      );
    } catch (error) {
      if (workFailed) throw error;
      if (error instanceof IdempotencyConflictError)
        throw new UnprocessableEntityException(
          'this Idempotency-Key was already used for another request (another method, path, body or caller)',
        );
      if (error instanceof IdempotencyInProgressError)
        throw new ConflictException('a request with this Idempotency-Key is still being processed; retry later');
      throw error;
    }
    if (!outcome.replayed) return body;
    return this.replay(response, outcome.result, sealing);
  }

  private toStored(
    response: IdempotentResponse,
    body: unknown,
    secretFields: readonly string[],
    sealing: SealingContext | undefined,
  ): StoredResponse {
    const headers: Record<string, string | string[]> = {};
    // Kept under the name the response set them with (`ETag`, not `etag`), so that a repeat
    // carries them as the first response did; else as the options spell them.
    const setAs = new Map((response.getRawHeaderNames?.() ?? []).map((raw) => [raw.toLowerCase(), raw]));
    for (const name of this.options.responseHeaders) {
      const value = response.getHeader(name);
      if (value !== undefined)
        headers[setAs.get(name.toLowerCase()) ?? name] = typeof value === 'number' ? String(value) : value;
    }
    const { clear, secret } = splitSecretFields(body, secretFields);
    return {
      status: response.statusCode,
      headers,
      body: clear,
      ...(secret !== undefined && sealing !== undefined ? { sealed: seal(secret, sealing) } : {}),
    };
  }

  private unsealed(sealed: string, sealing: SealingContext | undefined): unknown {
    if (sealing === undefined) return unreadable(new Error('no encryptionKey is set'));
    try {
      return unseal(sealed, sealing);
    } catch (error) {
      return unreadable(error);
    }
  }

  private replay(response: IdempotentResponse, stored: StoredResponse, sealing: SealingContext | undefined): unknown {
    let body = stored.body;
    if (stored.sealed !== undefined) {
      body = {
        ...(body as Record<string, unknown>),
        ...(this.unsealed(stored.sealed, sealing) as Record<string, unknown>),
      };
    }
    setStatus(response, stored.status);
    for (const [name, value] of Object.entries(stored.headers)) setHeader(response, name, value);
    setHeader(response, REPLAYED_HEADER, 'true');
    return body;
  }
}

/**
 * The request ran once; its kept response is unreadable here (another encryptionKey). A 500 that
 * says so, never a second run, and nothing a retry under the same key would change.
 */
function unreadable(cause: unknown): never {
  throw new InternalServerErrorException(
    'the first response to this Idempotency-Key cannot be replayed by this server; the request was processed once, do not repeat it under a new key',
    { cause: new IdempotencyResultUnreadableError({ cause }) },
  );
}

function setStatus(response: IdempotentResponse, status: number): void {
  if (typeof response.status === 'function') response.status(status);
  else if (typeof response.code === 'function') response.code(status);
  else response.statusCode = status;
}

function setHeader(response: IdempotentResponse, name: string, value: string | string[]): void {
  if (typeof response.setHeader === 'function') response.setHeader(name, value);
  else response.header?.(name, value);
}
