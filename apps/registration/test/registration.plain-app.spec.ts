import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '../src/app.module.js';
import { freshName, paddedBody } from './support/test-app.js';

// The service as any Nest user would start it: `imports: [AppModule]` (configured from the
// environment) and a bare createNestApplication(), without this repository's configureApp().
// Validation and the mapping of bad input to 400 must hold all the same.
/** body-parser's default JSON limit ('100kb'), the one a plain Nest Express app applies. */
const DEFAULT_JSON_LIMIT_BYTES = 100 * 1024;

describe('imports: [AppModule] with a plain createNestApplication()', () => {
  let app: INestApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
    http = request(app.getHttpServer());
  });

  afterAll(async () => {
    await app?.close();
  });

  it('serves the API: 201, then 409 for the same name in another case', async () => {
    const name = freshName('Plain');
    const res = await http.post('/users').send({ username: name }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      username: name.toLowerCase(),
      version: 1,
      secret: expect.any(String),
    });
    await http.post('/users').send({ username: name.toUpperCase() }).expect(409);
    await http.get('/health').expect(200);
  });

  it('answers 400 for operator objects, unknown fields and malformed JSON', async () => {
    await http
      .post('/users')
      .send({ username: { $ne: null } })
      .expect(400);
    await http.post('/users').send({ username: freshName(), role: 'admin' }).expect(400);
    await http.post('/users').set('content-type', 'application/json').send('{"username":').expect(400);
    await http.get('/users').query({ username: 'no way' }).expect(400);
  });

  it('answers 400 for a body nested 3,000 deep and for a "__proto__" field (the validation pipe bounds both)', async () => {
    const sendJson = (body: string) => http.post('/users').set('content-type', 'application/json').send(body);
    const deep = await sendJson(`{"username":${'['.repeat(3_000)}"abc"${']'.repeat(3_000)}}`).expect(400);
    expect(deep.body.message).toMatch(/nested deeper than 32 levels/);
    const name = freshName('proto');
    await sendJson(`{"username":"${name}","__proto__":{"admin":true}}`).expect(400);
    await http.get(`/usernames/${name}`).expect(200, { username: name, available: true });
  });

  it(`answers 400 "too large" for a valid body over the default parser's ${DEFAULT_JSON_LIMIT_BYTES / 1024} KB, and 201 under it`, async () => {
    const sendJson = (body: string) => http.post('/users').set('content-type', 'application/json').send(body);
    const res = await sendJson(paddedBody(freshName(), DEFAULT_JSON_LIMIT_BYTES + 20_000)).expect(400);
    expect(res.body.message).toContain('too large');
    await sendJson(paddedBody(freshName(), DEFAULT_JSON_LIMIT_BYTES - 1_000)).expect(201);
  });
});
