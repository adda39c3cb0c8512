import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication, NestExpressBodyParserOptionsFor } from '@nestjs/platform-express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonTextNestsDeeperThan, TOO_DEEP } from './json-depth.js';
import { setupOpenApi } from './openapi.js';

/** The largest JSON body the service reads. */
export const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * What only the application object can set, shared by `main.ts` and the e2e tests: a JSON
 * body parser bounded at 16 KB and 32 levels of nesting (create the app with `{ bodyParser:
 * false }` so it is the only one), no `X-Powered-By`, shutdown hooks, and the OpenAPI document
 * at /docs and /docs-json. Validation and error mapping are providers of RegistrationModule.
 */
export function configureApp<T extends INestApplication>(app: T): T {
  const express = app as unknown as NestExpressApplication;
  // Nest's type leaves `verify` out because its `rawBody` option replaces it; this app does not
  // use rawBody (were it set, the validation pipe would still bound the parsed value).
  const json = { limit: BODY_LIMIT_BYTES, strict: true, verify: refuseDeepJson };
  express.useBodyParser('json', json as NestExpressBodyParserOptionsFor<'json'>);
  express.disable('x-powered-by');
  app.enableShutdownHooks();
  setupOpenApi(app);
  return app;
}

/**
 * body-parser's `verify`: a body nested too deep is refused before it is parsed, so nothing
 * after the parser ever holds it. A SyntaxError with status 400 is what Nest's Express adapter
 * answers as a 400 with its message, as it does malformed JSON.
 */
function refuseDeepJson(_req: IncomingMessage, _res: ServerResponse, body: Buffer, encoding: string): void {
  let bytes: Uint8Array = body;
  if (!/^utf-?8$/i.test(encoding)) {
    try {
      bytes = Buffer.from(new TextDecoder(encoding).decode(body));
    } catch {
      // A charset TextDecoder lacks (UTF-32): the validation pipe bounds the parsed value instead.
      return;
    }
  }
  if (jsonTextNestsDeeperThan(bytes)) throw Object.assign(new SyntaxError(TOO_DEEP), { status: 400 });
}
