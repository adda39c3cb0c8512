import { Test, TestingModule } from '@nestjs/testing';
import { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { App } from 'supertest/types.js';
import { AppModule } from './../src/app.module.js';

describe('AppController (e2e)', () => {
  let app: INestApplication<App>;

  beforeEach(async () => {
    const moduleFixture: TestingModule = await Test.createTestingModule({
      imports: [AppModule],
    }).compile();

    app = moduleFixture.createNestApplication();
    await app.init();
  });

  it('/users/:username (POST) registers a name once', async () => {
    const first = await request(app.getHttpServer())
      .post('/users/alice')
      .expect(201);
    expect(first.body).toEqual({ id: expect.any(String) });
    await request(app.getHttpServer())
      .post('/users/alice')
      .expect(409)
      .expect((res) =>
        expect(res.body.message).toBe("username 'alice' is taken"),
      );
  });

  afterEach(async () => {
    await app.close();
  });
});
