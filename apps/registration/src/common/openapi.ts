import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { USER_SECRET_SCHEME } from '../auth/user-secret.decorator.js';

/** Where the OpenAPI document is served: the UI at /docs, the JSON at /docs-json. */
export const OPENAPI_PATH = 'docs';

export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('registration')
    .setDescription(
      'The ddd-kit sample: users with application-unique, case-folded usernames. ' +
        'Renaming and deleting a user take `Authorization: Bearer <secret>`, the secret its registration returned.',
    )
    .setVersion('0.1.0')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'the secret POST /users returned for the user' },
      USER_SECRET_SCHEME,
    )
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** Serves the document at /docs (Swagger UI) and /docs-json. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup(OPENAPI_PATH, app, () => createOpenApiDocument(app), { jsonDocumentUrl: `${OPENAPI_PATH}-json` });
}
