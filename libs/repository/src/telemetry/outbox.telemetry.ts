// Its own file, so the public declarations (index.d.ts) never reach @opentelemetry/api's types:
// a consumer without the optional peer type-checks.
import type { BatchObservableCallback } from '@opentelemetry/api';
import type { OutboxStatus } from '../outbox/outbox.interfaces.js';
import { AGGREGATE_NAME, repositoryTelemetry } from './repository.telemetry.js';

/**
 * For an outbox relay: records how long a data-sync event waited between being stored with its
 * write and being delivered to the `@OnDataSync` handlers, as `ddd_kit.outbox.lag` (a histogram in
 * seconds, attribute `ddd_kit.aggregate.name`). Does nothing unless an OpenTelemetry SDK with a
 * MeterProvider is registered (and `@opentelemetry/api` installed).
 *
 * @param aggregateName the aggregate whose event was delivered (as in `DataSyncEvent`)
 * @param lagMs delivery time minus storage time, in milliseconds (a negative lag, from clocks
 *   that disagree, is recorded as 0)
 */
export function recordOutboxLag(aggregateName: string, lagMs: number): void {
  const instruments = repositoryTelemetry.instruments();
  if (instruments === undefined || !Number.isFinite(lagMs)) return;
  instruments.outboxLag.record(Math.max(0, lagMs) / 1000, { [AGGREGATE_NAME]: aggregateName });
}

/**
 * For an outbox relay (or anything with its `status()`): reports its dead letters each time the
 * MeterProvider collects, as `ddd_kit.outbox.dead_letters` (a gauge, `{event}`) and
 * `ddd_kit.outbox.dead_letters.oldest_age` (a gauge in seconds, 0 when none): one `status()`
 * call per collection. A collection whose `status()` fails reports nothing. Does nothing (and
 * returns a no-op) unless a MeterProvider is registered; call it after the SDK started.
 *
 * @returns a function that stops the reports
 */
export function observeOutboxDeadLetters(relay: { status(): Promise<OutboxStatus> }): () => void {
  const instruments = repositoryTelemetry.instruments();
  if (instruments === undefined) return () => undefined;
  const { meter, deadLetters, oldestDeadLetterAge } = instruments;
  const observed = [deadLetters, oldestDeadLetterAge];
  const callback: BatchObservableCallback = async (result) => {
    let status: OutboxStatus;
    try {
      status = await relay.status();
    } catch {
      return; // the store did not answer: no point is better than a wrong one (readiness says why)
    }
    result.observe(deadLetters, status.deadLetters);
    result.observe(oldestDeadLetterAge, (status.oldestDeadLetterAgeMs ?? 0) / 1000);
  };
  meter.addBatchObservableCallback(callback, observed);
  return () => meter.removeBatchObservableCallback(callback, observed);
}
