import { ValidationPipe, type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { BODY_LIMIT_BYTES, HttpErrorFilter } from './http-exception.filter.js';

/**
 * HTTP concerns shared by `main.ts` and the e2e tests: a bounded JSON body parser, DTO
 * validation that refuses unknown fields, and bad input mapped to 400. The app must be
 * created with `{ bodyParser: false }` so this parser is the only one.
 */
export function configureApp<T extends INestApplication>(app: T): T {
  const express = app as unknown as NestExpressApplication;
  express.useBodyParser('json', { limit: BODY_LIMIT_BYTES, strict: true });
  app.useGlobalFilters(new HttpErrorFilter(express.getHttpAdapter()));
  app.useGlobalPipes(
    new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true, forbidUnknownValues: true, stopAtFirstError: true }),
  );
  app.enableShutdownHooks();
  return app;
}
