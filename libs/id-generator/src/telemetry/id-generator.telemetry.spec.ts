import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { pointsOf, spanSummary, startTelemetry, type TelemetryRecorder } from '../../../../test/support/telemetry.js';
import { ClockSync } from '../clock/clock-sync.js';
import { ClockBackwardsError, MachineIdLostError } from '../errors.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import {
  MachineIdDistributor,
  type MachineIdDistribution,
  type MachineIdRequest,
  type MachineIdState,
} from '../machine/machine-id-distributor.js';
import { MachineIdHolder } from '../machine/machine-id-holder.js';
import { OffsetClock } from '../__tests__/test-clocks.js';

/** A distributor whose heartbeat answers what the test says: ok, a lost ID, or a store error. */
class ScriptedDistributor extends MachineIdDistributor {
  override readonly safeGuardMs = 60_000;
  override readonly guardIntervalMs = undefined; // heartbeats only when the test calls them
  next: 'ok' | 'lost' | 'down' = 'ok';
  private issued = 0;

  async distribute(_request: MachineIdRequest): Promise<MachineIdDistribution> {
    return { machineId: this.issued++, lastTimestamp: 0 };
  }

  async guard(state: MachineIdState): Promise<void> {
    if (this.next === 'lost') throw new MachineIdLostError(state.namespace, state.machineId, state.instanceId);
    if (this.next === 'down') throw new Error('connection refused');
  }

  async revert(): Promise<boolean> {
    return true;
  }
}

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('id-generator telemetry (OpenTelemetry SDK with in-memory exporters)', () => {
  let telemetry: TelemetryRecorder;

  beforeAll(async () => {
    telemetry = await startTelemetry();
  });
  afterAll(async () => {
    await telemetry.stop();
  });
  beforeEach(async () => {
    await telemetry.reset();
  });

  async function idsIssued(): Promise<Record<string, number>> {
    const points = pointsOf(await telemetry.metricPoints(), 'ddd_kit.id_generator.ids');
    return Object.fromEntries(points.map((p) => [String(p.attributes['ddd_kit.id_generator.call']), p.value]));
  }

  it('counts IDs issued by generate() and generateAsync(), with no span for an ID that needed no wait', async () => {
    const sync = new ClockSync(new CosIdGenerator({ machineId: 1 }));
    const before = await idsIssued();
    for (let i = 0; i < 5; i++) sync.generate();
    for (let i = 0; i < 3; i++) await sync.generateAsync();
    sync.run(() => sync.generator.generate());
    const after = await idsIssued();
    expect(after['generate']! - (before['generate'] ?? 0)).toBe(6);
    expect(after['generate_async']! - (before['generate_async'] ?? 0)).toBe(3);
    expect(telemetry.spans()).toEqual([]);
  });

  it('a clock moved back: a clock_wait span and count, caught_up when waited out, error when too far behind', async () => {
    const clock = new OffsetClock();
    // A generous brokenThresholdMs: a descheduled test process must not turn the short wait into an error.
    const sync = new ClockSync(new CosIdGenerator({ machineId: 2, clock: clock.now }), {
      spinThresholdMs: 5,
      brokenThresholdMs: 10_000,
    });
    sync.generate();
    clock.back(30);
    await sync.generateAsync(); // waits ~30 ms with a timer
    clock.back(600_000);
    await Promise.resolve(); // a new synchronous run reads the clock again
    expect(() => sync.generate()).toThrow(ClockBackwardsError);

    const spans = telemetry.spans();
    expect(spanSummary(spans)).toEqual(['id_generator.clock_wait caught_up', 'id_generator.clock_wait error']);
    expect(spans[0]!.attributes['ddd_kit.id_generator.call']).toBe('generate_async');
    expect(spans[0]!.attributes['ddd_kit.id_generator.clock.backwards_ms']).toBeGreaterThan(0);
    expect([spans[1]!.attributes['ddd_kit.id_generator.call'], spans[1]!.attributes['error.type']]).toEqual([
      'generate',
      'ClockBackwardsError',
    ]);

    const points = await telemetry.metricPoints();
    const waits = pointsOf(points, 'ddd_kit.id_generator.clock.waits').map((p) => [
      p.attributes['ddd_kit.id_generator.call'],
      p.attributes['ddd_kit.outcome'],
      p.value,
    ]);
    expect(waits).toEqual(
      expect.arrayContaining([
        ['generate_async', 'caught_up', 1],
        ['generate', 'error', 1],
      ]),
    );
    expect(waits).toHaveLength(2);
    const [waited] = pointsOf(points, 'ddd_kit.id_generator.clock.wait.duration', { 'ddd_kit.outcome': 'caught_up' });
    expect(waited!.unit).toBe('s');
    expect(waited!.sum).toBeGreaterThan(0);
  });

  it('machine-ID lease: acquire, renewals (renewed, error, lost), a loss and the replacement, release', async () => {
    const distributor = new ScriptedDistributor();
    const holder = await MachineIdHolder.acquire({
      distributor,
      namespace: 'orders',
      machineBits: 4,
      instanceId: 'web-1',
      logger: silent,
    });
    await holder.heartbeat();
    distributor.next = 'down';
    await holder.heartbeat();
    distributor.next = 'lost';
    await holder.heartbeat();
    distributor.next = 'ok';
    expect(await holder.whenUsable(5_000)).toBe(true); // the replacement was acquired
    expect(holder.machineId).toBe(1);
    expect(await holder.release()).toBe(true);

    const spans = telemetry.spans();
    expect(spanSummary(spans)).toEqual([
      'machine_id.acquire acquired',
      'machine_id.renew renewed',
      'machine_id.renew error',
      'machine_id.renew lost',
      'machine_id.acquire acquired',
      'machine_id.release released',
    ]);
    expect(spans.every((s) => s.attributes['ddd_kit.machine_id.namespace'] === 'orders')).toBe(true);
    expect(spans[3]!.attributes['error.type']).toBe('MachineIdLostError');

    const points = await telemetry.metricPoints();
    const renewals = pointsOf(points, 'ddd_kit.machine_id.lease.renewals', {
      'ddd_kit.machine_id.namespace': 'orders',
    });
    expect(Object.fromEntries(renewals.map((p) => [p.attributes['ddd_kit.outcome'], p.value]))).toEqual({
      renewed: 1,
      error: 1,
      lost: 1,
    });
    expect(pointsOf(points, 'ddd_kit.machine_id.lease.losses').map((p) => [p.attributes, p.value])).toEqual([
      [{ 'ddd_kit.machine_id.namespace': 'orders' }, 1],
    ]);
  });
});
