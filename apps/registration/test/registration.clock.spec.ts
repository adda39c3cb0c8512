import { afterAll, beforeAll, describe, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { AggregateIdGeneratorRegistrar, ClockSync, CosIdGenerator } from '@ddd-kit/id-generator';
import request from 'supertest';
import { createTestApp, freshName, memoryBackend } from './support/test-app.js';

// A clock that steps back on the request path must not fail the request: IDs are issued with
// generateAsync(), which waits the step out with a timer (up to brokenThresholdMs) instead of
// the synchronous generate()'s short spin.
describe('registration while the clock steps back', () => {
  let app: INestApplication;
  let offset = 0;

  beforeAll(async () => {
    const clock = () => Date.now() + offset;
    const generator = new ClockSync(new CosIdGenerator({ machineId: 7, clock }));
    app = await createTestApp(memoryBackend.config(), (builder) =>
      builder
        .overrideProvider(AggregateIdGeneratorRegistrar)
        .useValue({ get: () => generator } as unknown as AggregateIdGeneratorRegistrar),
    );
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a step back of 60 ms (12 times the synchronous spin) is waited out: 201, not 500', async () => {
    const http = request(app.getHttpServer());
    await http
      .post('/users')
      .send({ username: freshName('tick') })
      .expect(201);
    offset = -60; // NTP steps the clock back
    await http
      .post('/users')
      .send({ username: freshName('tock') })
      .expect(201);
  });
});
