// One registration (POST /users) through the app in process, with an OpenTelemetry SDK whose
// exporters keep everything in memory: the spans and metric points the libraries report for it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { startTelemetry, type MetricPoint, type TelemetryRecorder } from '../../../test/support/telemetry.js';
import { backends, createTestApp, freshName } from './support/test-app.js';

/** A metric point as one line: name, attributes (sorted), value (a histogram's count). */
function line(point: MetricPoint): string {
  const attributes = Object.entries(point.attributes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
  return `${point.name}{${attributes}} ${point.value}`;
}

// The lease's heartbeats (a shared deployment) run on their own timer: not part of the request.
const ofTheRequest = (name: string): boolean =>
  !name.startsWith('machine_id.') && !name.startsWith('ddd_kit.machine_id.');

// One SDK for the file, registered before any app is built (as an application's main.ts would).
let telemetry: TelemetryRecorder;
beforeAll(async () => {
  telemetry = await startTelemetry();
});
afterAll(async () => {
  await telemetry?.stop();
});

describe.each(backends)('telemetry of one registration on $label', (backend) => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await createTestApp(backend.config());
  });

  afterAll(async () => {
    await app?.close();
  });

  it('POST /users: a reservation inside the insert, both by outcome, and one ID issued with generateAsync()', async () => {
    await telemetry.reset();
    await request(app.getHttpServer())
      .post('/users')
      .send({ username: freshName('otel') })
      .expect(201);

    // Spans, in the order they ended: the reservation of the username is a child of the insert
    // that @UniqueKey makes it guard. An ID issued without waiting has no span.
    const spans = telemetry.spans().filter((s) => ofTheRequest(s.name));
    expect(spans.map((s) => `${s.name} ${String(s.attributes['ddd_kit.outcome'])}`)).toEqual([
      'prepare_key.prepare won',
      'repository.insert ok',
    ]);
    const [prepare, insert] = spans;
    expect(prepare!.attributes).toEqual({
      'ddd_kit.prepare_key.name': 'username',
      'ddd_kit.prepare_key.operation': 'prepare',
      'ddd_kit.outcome': 'won',
    });
    expect(insert!.attributes).toEqual({
      'ddd_kit.aggregate.name': 'user',
      'ddd_kit.repository.operation': 'insert',
      'ddd_kit.outcome': 'ok',
    });
    expect(prepare!.parentSpanContext?.spanId).toBe(insert!.spanContext().spanId);
    expect(prepare!.spanContext().traceId).toBe(insert!.spanContext().traceId);

    // Metric points that moved: one count and one duration for each operation, and one ID issued.
    const lines = (await telemetry.metricPoints()).filter((p) => ofTheRequest(p.name)).map(line);
    expect(lines.sort()).toEqual(
      [
        'ddd_kit.id_generator.ids{ddd_kit.id_generator.call=generate_async} 1',
        'ddd_kit.prepare_key.operations{ddd_kit.outcome=won,ddd_kit.prepare_key.name=username,ddd_kit.prepare_key.operation=prepare} 1',
        'ddd_kit.prepare_key.operation.duration{ddd_kit.outcome=won,ddd_kit.prepare_key.name=username,ddd_kit.prepare_key.operation=prepare} 1',
        'ddd_kit.repository.operations{ddd_kit.aggregate.name=user,ddd_kit.outcome=ok,ddd_kit.repository.operation=insert} 1',
        'ddd_kit.repository.operation.duration{ddd_kit.aggregate.name=user,ddd_kit.outcome=ok,ddd_kit.repository.operation=insert} 1',
      ].sort(),
    );
  });

  it('a name already taken: the reservation is taken and the insert reports it (409)', async () => {
    const name = freshName('otel');
    await request(app.getHttpServer()).post('/users').send({ username: name }).expect(201);
    await telemetry.reset();
    await request(app.getHttpServer()).post('/users').send({ username: name }).expect(409);
    const spans = telemetry.spans().filter((s) => ofTheRequest(s.name));
    expect(spans.map((s) => `${s.name} ${String(s.attributes['ddd_kit.outcome'])}`)).toEqual([
      'prepare_key.prepare taken',
      'repository.insert taken',
    ]);
    expect(spans[1]!.attributes['error.type']).toBe('UniqueKeyViolationError');
  });
});
