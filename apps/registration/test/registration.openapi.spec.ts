// The OpenAPI document (GET /docs-json) describes SPEC §4's table: every route with its method
// and every status the table names, plus the 401/403 of the user secret on PATCH and DELETE.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, memoryBackend } from './support/test-app.js';

interface Row {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string; // as SPEC §4 writes it
  statuses: number[];
  /** Takes `Authorization: Bearer <secret>` of the user (SPEC §4, below the table). */
  secured?: boolean;
}

/** SPEC §4's table, row by row, with the paragraph below it (secret: 401 without, 403 with another user's). */
const SPEC_TABLE: Row[] = [
  { method: 'post', path: '/users', statuses: [201, 400, 409] },
  { method: 'get', path: '/users/:id', statuses: [200, 404] },
  { method: 'patch', path: '/users/:id/username', statuses: [200, 400, 404, 409, 412, 401, 403], secured: true },
  { method: 'delete', path: '/users/:id', statuses: [204, 404, 412, 401, 403], secured: true },
  { method: 'get', path: '/usernames/:name', statuses: [200, 400] },
  { method: 'get', path: '/users', statuses: [200, 400] },
  { method: 'get', path: '/health', statuses: [200, 503] },
  { method: 'get', path: '/health/live', statuses: [200, 503] },
  { method: 'get', path: '/health/ready', statuses: [200, 503] },
];

/**
 * What the table names that the app does not serve yet (nothing, now that readiness is built).
 * Each entry must still be missing from the document: once the app serves it, this test fails
 * until the entry is removed here, so the document is then checked for it too.
 */
const NOT_BUILT_YET: string[] = [];

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

interface Operation {
  responses: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
}

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
}

describe('OpenAPI document of the sample', () => {
  let app: INestApplication;
  let document: OpenApiDocument;

  beforeAll(async () => {
    app = await createTestApp(memoryBackend.config());
    document = (await request(app.getHttpServer()).get('/docs-json').expect(200).expect('content-type', /json/)).body;
  });

  afterAll(async () => {
    await app?.close();
  });

  const pending = (key: string) => NOT_BUILT_YET.includes(key);

  it('serves the Swagger UI at /docs and an OpenAPI 3 document at /docs-json', async () => {
    const ui = await request(app.getHttpServer()).get('/docs').redirects(1).expect(200);
    expect(ui.text).toMatch(/swagger-ui/i);
    expect(document.openapi).toMatch(/^3\./);
  });

  it('documents every route, method and status of SPEC §4, each response with a description', () => {
    const missing: string[] = [];
    for (const row of SPEC_TABLE) {
      const operation = document.paths[openApiPath(row.path)]?.[row.method];
      if (!operation) {
        if (!pending(`${row.method} ${row.path}`))
          missing.push(`${row.method.toUpperCase()} ${row.path}: not documented`);
        continue;
      }
      for (const status of row.statuses) {
        if (pending(`${row.method} ${row.path} ${status}`)) continue;
        const response = operation.responses[String(status)];
        if (!response) missing.push(`${row.method.toUpperCase()} ${row.path}: no ${status} response`);
        else if (!response.description?.trim())
          missing.push(`${row.method.toUpperCase()} ${row.path}: ${status} has no description`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents nothing beyond the table', () => {
    const table = new Set(SPEC_TABLE.map((row) => `${row.method} ${openApiPath(row.path)}`));
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    expect(documented.filter((operation) => !table.has(operation))).toEqual([]);
  });

  it('still lacks exactly what is listed as not built yet (remove an entry once the app serves it)', () => {
    const served = NOT_BUILT_YET.filter((key) => {
      const [method, path, status] = key.split(' ');
      const operation = document.paths[path]?.[method];
      return status === undefined ? operation !== undefined : operation?.responses[status] !== undefined;
    });
    expect(served).toEqual([]);
  });

  it('describes the health answers as @nestjs/terminus JSON (status, info, error, details), 200 and 503 alike', () => {
    for (const path of ['/health', '/health/live', '/health/ready']) {
      for (const status of ['200', '503']) {
        const schema = document.paths[path].get.responses[status]?.content?.['application/json']?.schema as
          { properties?: Record<string, unknown> } | undefined;
        expect({ path, status, properties: Object.keys(schema?.properties ?? {}).sort() }).toEqual({
          path,
          status,
          properties: ['details', 'error', 'info', 'status'],
        });
      }
    }
  });

  it('gives the body schema of every success that has a body', () => {
    const withoutSchema = SPEC_TABLE.flatMap((row) => {
      const operation = document.paths[openApiPath(row.path)]?.[row.method];
      const success = row.statuses.find((s) => s < 300)!;
      if (!operation || success === 204 || pending(`${row.method} ${row.path}`)) return [];
      return operation.responses[String(success)]?.content?.['application/json']?.schema
        ? []
        : [`${row.method} ${row.path} ${success}`];
    });
    expect(withoutSchema).toEqual([]);
  });

  it('declares the bearer secret on PATCH and DELETE only, and If-Match where the routes read it', () => {
    const schemes = document.components?.securitySchemes ?? {};
    for (const row of SPEC_TABLE) {
      const operation = document.paths[openApiPath(row.path)]?.[row.method];
      if (!operation) continue;
      const names = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      expect({ route: `${row.method} ${row.path}`, secured: names.length > 0 }).toEqual({
        route: `${row.method} ${row.path}`,
        secured: !!row.secured,
      });
      for (const name of names) expect(schemes[name]).toMatchObject({ type: 'http', scheme: 'bearer' });
    }
    const ifMatch = (method: Row['method'], path: string) =>
      document.paths[openApiPath(path)][method].parameters?.find(
        (p) => p.in === 'header' && p.name.toLowerCase() === 'if-match',
      );
    expect(ifMatch('patch', '/users/:id/username')).toMatchObject({ required: true });
    expect(ifMatch('delete', '/users/:id')).toMatchObject({ required: false });
  });

  it('shows the secret in the registration response only', () => {
    const schemaOf = (method: Row['method'], path: string, status: number) =>
      JSON.stringify(
        document.paths[openApiPath(path)][method].responses[String(status)].content!['application/json'].schema,
      );
    const registered = schemaOf('post', '/users', 201);
    const ref = /#\/components\/schemas\/(\w+)/.exec(registered)?.[1];
    const schemas =
      (document.components as { schemas?: Record<string, { properties?: Record<string, unknown> }> }).schemas ?? {};
    expect(Object.keys(schemas[ref!]?.properties ?? {})).toEqual(
      expect.arrayContaining(['id', 'username', 'version', 'secret']),
    );
    for (const [method, path, status] of [
      ['get', '/users/:id', 200],
      ['patch', '/users/:id/username', 200],
      ['get', '/users', 200],
    ] as const) {
      const other = /#\/components\/schemas\/(\w+)/.exec(schemaOf(method, path, status))?.[1];
      expect({ route: `${method} ${path}`, properties: Object.keys(schemas[other!]?.properties ?? {}) }).toEqual({
        route: `${method} ${path}`,
        properties: ['id', 'username', 'version'],
      });
    }
  });
});
