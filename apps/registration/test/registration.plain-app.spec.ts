import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '../src/app.module.js';
import { freshName } from './support/test-app.js';

// The service as any Nest user would start it: `imports: [AppModule]` (configured from the
// environment) and a bare createNestApplication(), without this repository's configureApp().
// Validation and the mapping of bad input to 400 must hold all the same.
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
    expect(res.body).toEqual({ id: expect.any(String), username: name.toLowerCase(), version: 1, secret: expect.any(String) });
    await http.post('/users').send({ username: name.toUpperCase() }).expect(409);
    await http.get('/health').expect(200);
  });

  it('answers 400 for operator objects, unknown fields, malformed JSON and bodies over the parser limit', async () => {
    await http.post('/users').send({ username: { $ne: null } }).expect(400);
    await http.post('/users').send({ username: freshName(), role: 'admin' }).expect(400);
    await http.post('/users').set('content-type', 'application/json').send('{"username":').expect(400);
    await http.post('/users').send({ username: freshName(), padding: 'x'.repeat(200_000) }).expect(400);
    await http.get('/users').query({ username: 'no way' }).expect(400);
  });
});
