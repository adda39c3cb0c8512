import type { Counter, Histogram } from '@opentelemetry/api';
import { DURATION_BUCKETS, LibraryTelemetry, type OperationInstruments } from '@ddd-kit/core/telemetry';

/**
 * What `@ddd-kit/prepare-key` reports through `@opentelemetry/api` (listed in the README).
 *
 * Spans (internal): `prepare_key.<operation>`. Metrics: `ddd_kit.prepare_key.operations` (a counter)
 * and `ddd_kit.prepare_key.operation.duration` (a histogram, seconds), both with
 * `ddd_kit.prepare_key.name`, `ddd_kit.prepare_key.operation`, `ddd_kit.outcome` and, on an error,
 * `error.type`. Keys and values (user data) are never recorded.
 */
export const PREPARE_KEY_NAME = 'ddd_kit.prepare_key.name';
export const PREPARE_KEY_OPERATION = 'ddd_kit.prepare_key.operation';

/** Outcomes, by operation: prepare and usingPrepare won / taken; rollback released / not_held; reprepare and changeKey changed / not_held or taken; any: error. */
export const Outcome = {
  WON: 'won',
  TAKEN: 'taken',
  RELEASED: 'released',
  NOT_HELD: 'not_held',
  CHANGED: 'changed',
} as const;

interface PrepareKeyInstruments extends OperationInstruments {
  readonly count: Counter;
  readonly duration: Histogram;
}

export const prepareKeyTelemetry = new LibraryTelemetry<PrepareKeyInstruments>(
  '@ddd-kit/prepare-key',
  PREPARE_KEY_NAME,
  PREPARE_KEY_OPERATION,
  (meter) => ({
    count: meter.createCounter('ddd_kit.prepare_key.operations', {
      unit: '{operation}',
      description: 'PrepareKey calls (prepare, rollback, reprepare, change_key, using_prepare) by outcome',
    }),
    duration: meter.createHistogram('ddd_kit.prepare_key.operation.duration', {
      unit: 's',
      description: 'Duration of PrepareKey calls',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
  }),
);

export const operations = (instruments: PrepareKeyInstruments): OperationInstruments => instruments;

export const wonOrTaken = (prepared: boolean): string => (prepared ? Outcome.WON : Outcome.TAKEN);
export const releasedOrNot = (released: boolean): string => (released ? Outcome.RELEASED : Outcome.NOT_HELD);
export const changedOrNot = (changed: boolean): string => (changed ? Outcome.CHANGED : Outcome.NOT_HELD);
export const changedOrTaken = (changed: boolean): string => (changed ? Outcome.CHANGED : Outcome.TAKEN);
