import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { SpanStatusCode } from '@opentelemetry/api';
import { pointsOf, spanSummary, startTelemetry, type TelemetryRecorder } from '../../../../test/support/telemetry.js';
import { MemoryPrepareKeyFactory } from '../backends/memory/memory-prepare-key.factory.js';
import { PrepareKeyStateError } from '../errors.js';
import type { PrepareKey } from '../prepare-key.js';

const OPERATIONS = 'ddd_kit.prepare_key.operations';
const DURATION = 'ddd_kit.prepare_key.operation.duration';

describe('PrepareKey telemetry (OpenTelemetry SDK with in-memory exporters)', () => {
  let telemetry: TelemetryRecorder;
  let names: PrepareKey<string>;

  beforeAll(async () => {
    telemetry = await startTelemetry();
  });
  afterAll(async () => {
    await telemetry.stop();
  });
  beforeEach(async () => {
    await telemetry.reset();
    names = new MemoryPrepareKeyFactory().create<string>('username');
  });

  /** The one count of `operation` with `outcome`, and its duration point. */
  async function expectCounted(operation: string, outcome: string, count = 1): Promise<void> {
    const points = await telemetry.metricPoints();
    const attributes = {
      'ddd_kit.prepare_key.name': 'username',
      'ddd_kit.prepare_key.operation': operation,
      'ddd_kit.outcome': outcome,
    };
    expect(pointsOf(points, OPERATIONS, attributes).map((p) => p.value)).toEqual([count]);
    const durations = pointsOf(points, DURATION, attributes);
    expect(durations.map((p) => [p.unit, p.value])).toEqual([['s', count]]);
  }

  it('prepare: a span and a count with outcome won, then taken', async () => {
    expect(await names.prepare('alice', 'u1')).toBe(true);
    expect(await names.prepare('alice', 'u2')).toBe(false);
    const spans = telemetry.spans();
    expect(spanSummary(spans)).toEqual(['prepare_key.prepare won', 'prepare_key.prepare taken']);
    expect(spans[0]!.attributes).toEqual({
      'ddd_kit.prepare_key.name': 'username',
      'ddd_kit.prepare_key.operation': 'prepare',
      'ddd_kit.outcome': 'won',
    });
    // Keys and values are user data: never recorded.
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toMatch(/alice|u1|u2/);
    await expectCounted('prepare', 'won');
    await expectCounted('prepare', 'taken');
  });

  it('prepare: bad input is outcome error with error.type and an error status', async () => {
    await expect(names.prepare('', 'u1')).rejects.toThrow();
    const [span] = telemetry.spans();
    expect(span!.name).toBe('prepare_key.prepare');
    expect(span!.attributes['ddd_kit.outcome']).toBe('error');
    expect(span!.attributes['error.type']).toBe('PrepareKeyArgumentError');
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.status.message).toBeUndefined();
    const points = pointsOf(await telemetry.metricPoints(), OPERATIONS, { 'ddd_kit.outcome': 'error' });
    expect(points.map((p) => [p.attributes['error.type'], p.value])).toEqual([['PrepareKeyArgumentError', 1]]);
  });

  it('rollback: released, then not_held', async () => {
    await names.prepare('alice', 'u1');
    await telemetry.reset();
    expect(await names.rollback('alice', 'u1')).toBe(true);
    expect(await names.rollback('alice')).toBe(false);
    expect(spanSummary(telemetry.spans())).toEqual(['prepare_key.rollback released', 'prepare_key.rollback not_held']);
    await expectCounted('rollback', 'released');
    await expectCounted('rollback', 'not_held');
  });

  it('reprepare (value change): changed, then not_held', async () => {
    await names.prepare('alice', 'u1');
    await telemetry.reset();
    expect(await names.reprepare('alice', 'u1', 'u2')).toBe(true);
    expect(await names.reprepare('bob', 'u9')).toBe(false);
    expect(spanSummary(telemetry.spans())).toEqual(['prepare_key.reprepare changed', 'prepare_key.reprepare not_held']);
    await expectCounted('reprepare', 'changed');
    await expectCounted('reprepare', 'not_held');
  });

  it('key change: change_key with its prepare and rollback as child spans; taken when the new key is held', async () => {
    await names.prepare('alice', 'u1');
    await names.prepare('carol', 'u3');
    await telemetry.reset();
    expect(await names.reprepare('alice', 'u1', 'alicia', 'u1')).toBe(true);
    expect(await names.reprepare('alicia', 'u1', 'carol', 'u1')).toBe(false);
    const spans = telemetry.spans();
    expect(spanSummary(spans)).toEqual([
      'prepare_key.prepare won',
      'prepare_key.rollback released',
      'prepare_key.change_key changed',
      'prepare_key.prepare taken',
      'prepare_key.change_key taken',
    ]);
    const [prepare, rollback, change] = spans;
    expect(prepare!.parentSpanContext?.spanId).toBe(change!.spanContext().spanId);
    expect(rollback!.parentSpanContext?.spanId).toBe(change!.spanContext().spanId);
    await expectCounted('change_key', 'changed');
    await expectCounted('change_key', 'taken');
  });

  it('key change: an old key held by another value is outcome error (PrepareKeyStateError)', async () => {
    await names.prepare('alice', 'someone-else');
    await telemetry.reset();
    await expect(names.reprepare('alice', 'u1', 'alicia', 'u1')).rejects.toBeInstanceOf(PrepareKeyStateError);
    const change = telemetry.spans().find((s) => s.name === 'prepare_key.change_key')!;
    expect([change.attributes['ddd_kit.outcome'], change.attributes['error.type']]).toEqual([
      'error',
      'PrepareKeyStateError',
    ]);
    await expectCounted('change_key', 'error');
  });

  it('no SDK registered: calls work and nothing is recorded; an SDK registered afterwards is picked up on the next call', async () => {
    await telemetry.stop();
    expect(await names.prepare('late', 'u1')).toBe(true);
    expect(await names.rollback('late', 'u1')).toBe(true);
    telemetry = await startTelemetry(); // a new tracer and meter provider, after the library was used
    expect(await names.prepare('late', 'u1')).toBe(true);
    expect(spanSummary(telemetry.spans())).toEqual(['prepare_key.prepare won']);
    await expectCounted('prepare', 'won');
    expect(
      pointsOf(await telemetry.metricPoints(), OPERATIONS, { 'ddd_kit.prepare_key.operation': 'rollback' }),
    ).toEqual([]);
  });

  it('usingPrepare: won, taken, and error after a failed step (its rollback a child span)', async () => {
    await names.usingPrepare('alice', 'u1', async () => 'ok');
    await names.usingPrepare('alice', 'u2', async () => 'ok');
    await expect(
      names.usingPrepare('bob', 'u3', async () => {
        throw new TypeError('the write failed');
      }),
    ).rejects.toThrow('the write failed');
    const spans = telemetry.spans();
    expect(spanSummary(spans)).toEqual([
      'prepare_key.prepare won',
      'prepare_key.using_prepare won',
      'prepare_key.prepare taken',
      'prepare_key.using_prepare taken',
      'prepare_key.prepare won',
      'prepare_key.rollback released',
      'prepare_key.using_prepare error',
    ]);
    expect(spans[6]!.attributes['error.type']).toBe('TypeError');
    expect(spans[5]!.parentSpanContext?.spanId).toBe(spans[6]!.spanContext().spanId);
    await expectCounted('using_prepare', 'won');
    await expectCounted('using_prepare', 'taken');
    await expectCounted('using_prepare', 'error');
    await expectCounted('prepare', 'won', 2);
  });
});
