// Its own file, so the public declarations (index.d.ts) never reach @opentelemetry/api's types:
// a consumer without the optional peer type-checks.
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
