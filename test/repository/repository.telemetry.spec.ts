import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryPrepareKeyFactory } from '@ddd-kit/prepare-key';
import {
  AggregateRoot,
  InMemoryRepository,
  OptimisticLockError,
  UniqueKey,
  UniqueKeyViolationError,
  type UniqueKeyOwner,
} from '@ddd-kit/repository';
import { observeOutboxDeadLetters, recordOutboxLag } from '@ddd-kit/repository/outbox';
import { pointsOf, spanSummary, startTelemetry, type TelemetryRecorder } from '../support/telemetry.js';

@UniqueKey('member-name', (member: Member) => member.name)
class Member extends AggregateRoot<string> {
  constructor(
    id: string,
    public name: string,
  ) {
    super(id);
  }
}

describe('repository telemetry (OpenTelemetry SDK with in-memory exporters)', () => {
  let telemetry: TelemetryRecorder;
  let repository: InMemoryRepository<string, Member>;

  beforeAll(async () => {
    telemetry = await startTelemetry();
  });
  afterAll(async () => {
    await telemetry.stop();
  });
  beforeEach(async () => {
    await telemetry.reset();
    const names = new MemoryPrepareKeyFactory().create<UniqueKeyOwner>('member-name');
    repository = new InMemoryRepository<string, Member>({ aggregate: Member, uniqueKeys: { 'member-name': names } });
  });

  async function counts(): Promise<Record<string, number>> {
    const points = pointsOf(await telemetry.metricPoints(), 'ddd_kit.repository.operations', {
      'ddd_kit.aggregate.name': 'Member',
    });
    return Object.fromEntries(
      points.map((p) => [
        `${String(p.attributes['ddd_kit.repository.operation'])} ${String(p.attributes['ddd_kit.outcome'])}`,
        p.value,
      ]),
    );
  }

  it('insert, update, remove: ok; an optimistic-lock conflict on update; a unique key taken on insert', async () => {
    const ada = new Member('m1', 'ada');
    await repository.insert(ada);
    ada.name = 'ada2';
    await repository.update(ada);
    const stale = (await repository.findById('m1'))!;
    ada.name = 'ada3';
    await repository.update(ada);
    stale.name = 'ada4';
    await expect(repository.update(stale)).rejects.toBeInstanceOf(OptimisticLockError);
    await expect(repository.insert(new Member('m2', 'ada3'))).rejects.toBeInstanceOf(UniqueKeyViolationError);
    await repository.remove(ada);

    const spans = telemetry.spans().filter((s) => s.name.startsWith('repository.'));
    expect(spanSummary(spans)).toEqual([
      'repository.insert ok',
      'repository.update ok',
      'repository.update ok',
      'repository.update conflict',
      'repository.insert taken',
      'repository.remove ok',
    ]);
    expect(spans[3]!.attributes).toMatchObject({
      'ddd_kit.aggregate.name': 'Member',
      'error.type': 'OptimisticLockError',
    });
    // The reservation the insert made is a child of its span.
    const firstPrepare = telemetry.spans().find((s) => s.name === 'prepare_key.prepare')!;
    expect(firstPrepare.parentSpanContext?.spanId).toBe(spans[0]!.spanContext().spanId);

    expect(await counts()).toEqual({
      'insert ok': 1,
      'update ok': 2,
      'update conflict': 1,
      'insert taken': 1,
      'remove ok': 1,
    });
    const durations = pointsOf(await telemetry.metricPoints(), 'ddd_kit.repository.operation.duration', {
      'ddd_kit.outcome': 'conflict',
    });
    expect(durations.map((p) => [p.unit, p.value])).toEqual([['s', 1]]);
  });

  it('recordOutboxLag: one ddd_kit.outbox.lag point per delivered event, in seconds', async () => {
    recordOutboxLag('Member', 1_500);
    recordOutboxLag('Member', -20); // clocks that disagree: 0, never negative
    const [lag] = pointsOf(await telemetry.metricPoints(), 'ddd_kit.outbox.lag');
    expect(lag).toMatchObject({ unit: 's', attributes: { 'ddd_kit.aggregate.name': 'Member' }, value: 2, sum: 1.5 });
  });

  it("observeOutboxDeadLetters: the dead letters and the oldest one's age at each collection, until stopped", async () => {
    let status = { pending: 3, oldestPendingAgeMs: 10, deadLetters: 2, oldestDeadLetterAgeMs: 90_000 };
    const stop = observeOutboxDeadLetters({ status: async () => status });
    const read = async () =>
      Object.fromEntries(
        (await telemetry.metricPoints())
          .filter((p) => p.name.startsWith('ddd_kit.outbox.dead_letters'))
          .map((p) => [`${p.name} ${p.unit}`, p.value]),
      );
    expect(await read()).toEqual({
      'ddd_kit.outbox.dead_letters {event}': 2,
      'ddd_kit.outbox.dead_letters.oldest_age s': 90,
    });
    status = { ...status, deadLetters: 5, oldestDeadLetterAgeMs: 120_000 };
    expect(await read()).toEqual({
      'ddd_kit.outbox.dead_letters {event}': 5,
      'ddd_kit.outbox.dead_letters.oldest_age s': 120,
    });
    stop();
    status = { ...status, deadLetters: 7 };
    // No longer read: the SDK keeps the last point it had, never 7.
    expect(await read()).toMatchObject({ 'ddd_kit.outbox.dead_letters {event}': 5 });
  });
});
