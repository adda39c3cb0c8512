import type { Counter, Histogram, Meter, ObservableGauge } from '@opentelemetry/api';
import { DuplicateAggregateError, OptimisticLockError, UniqueKeyViolationError } from '../errors.js';
import { DURATION_BUCKETS, LibraryTelemetry, type OperationInstruments } from '@ddd-kit/core/telemetry';

/**
 * What `@ddd-kit/repository` reports through `@opentelemetry/api` (listed in the README).
 *
 * Spans (internal) `repository.insert` / `repository.update` / `repository.remove`; metrics
 * `ddd_kit.repository.operations` (a counter) and `ddd_kit.repository.operation.duration` (a
 * histogram, seconds), with `ddd_kit.aggregate.name`, `ddd_kit.repository.operation` and
 * `ddd_kit.outcome`: `ok`, `conflict` (OptimisticLockError), `taken` (UniqueKeyViolationError),
 * `duplicate` (DuplicateAggregateError) or `error`; `error.type` on every failure. An outbox relay
 * reports its lag with `recordOutboxLag` (`ddd_kit.outbox.lag`), its dead letters with
 * `observeOutboxDeadLetters` (`ddd_kit.outbox.dead_letters`, `ddd_kit.outbox.dead_letters.oldest_age`).
 */
export const AGGREGATE_NAME = 'ddd_kit.aggregate.name';
export const REPOSITORY_OPERATION = 'ddd_kit.repository.operation';

interface RepositoryInstruments {
  readonly writes: OperationInstruments;
  readonly outboxLag: Histogram;
  /** The meter the instruments are on: observable ones get their callbacks there. */
  readonly meter: Meter;
  readonly deadLetters: ObservableGauge;
  readonly oldestDeadLetterAge: ObservableGauge;
}

export const repositoryTelemetry = new LibraryTelemetry<RepositoryInstruments>(
  '@ddd-kit/repository',
  AGGREGATE_NAME,
  REPOSITORY_OPERATION,
  (meter) => {
    const count: Counter = meter.createCounter('ddd_kit.repository.operations', {
      unit: '{operation}',
      description: 'Repository writes (insert, update, remove) by outcome',
    });
    const duration: Histogram = meter.createHistogram('ddd_kit.repository.operation.duration', {
      unit: 's',
      description: 'Duration of repository writes, unique-key reservations and event publication included',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    const outboxLag = meter.createHistogram('ddd_kit.outbox.lag', {
      unit: 's',
      description: 'Time from a data-sync event being stored with its write to its delivery to the handlers',
      advice: {
        explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
      },
    });
    const deadLetters = meter.createObservableGauge('ddd_kit.outbox.dead_letters', {
      unit: '{event}',
      description: 'Data-sync events that became dead letters and wait for an operator',
    });
    const oldestDeadLetterAge = meter.createObservableGauge('ddd_kit.outbox.dead_letters.oldest_age', {
      unit: 's',
      description: 'How long ago the oldest dead letter died (0 when there is none)',
    });
    return { writes: { count, duration }, outboxLag, meter, deadLetters, oldestDeadLetterAge };
  },
);

export const writes = (instruments: RepositoryInstruments): OperationInstruments => instruments.writes;

export const ok = (): string => 'ok';

/** The outcome of a failed write: the failures a caller handles by kind, else 'error'. */
export function failedWrite(error: unknown): string {
  if (error instanceof OptimisticLockError) return 'conflict';
  if (error instanceof UniqueKeyViolationError) return 'taken';
  if (error instanceof DuplicateAggregateError) return 'duplicate';
  return 'error';
}

/**
 * Runs one write (`run` on `thisArg` with `arg`: no closure per write) inside its span and counts
 * it by outcome (just runs it when nothing records).
 */
export function observeWrite<A>(
  operation: string,
  aggregateName: string,
  run: (arg: A) => Promise<void>,
  thisArg: unknown,
  arg: A,
): Promise<void> {
  const telemetry = repositoryTelemetry.begin(`repository.${operation}`, writes, operation, aggregateName);
  return telemetry === undefined
    ? run.call(thisArg, arg)
    : telemetry.settle(telemetry.within(run, thisArg, arg), ok, failedWrite);
}
