import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { setupOpenApi } from './openapi.js';

/** The largest JSON body the service reads. */
export const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * What only the application object can set, shared by `main.ts` and the e2e tests: a JSON
 * body parser bounded at 16 KB (create the app with `{ bodyParser: false }` so it is the only
 * one), shutdown hooks, and the OpenAPI document at /docs and /docs-json. Validation and error
 * mapping are providers of RegistrationModule.
 */
export function configureApp<T extends INestApplication>(app: T): T {
  (app as unknown as NestExpressApplication).useBodyParser('json', { limit: BODY_LIMIT_BYTES, strict: true });
  app.enableShutdownHooks();
  setupOpenApi(app);
  return app;
}
