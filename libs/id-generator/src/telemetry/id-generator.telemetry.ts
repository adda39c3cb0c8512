import type { Counter, Histogram, ObservableCounter } from '@opentelemetry/api';
import { DURATION_BUCKETS, LibraryTelemetry, type OperationInstruments } from '@ddd-kit/core/telemetry';

/**
 * What `@ddd-kit/id-generator` reports through `@opentelemetry/api` (listed in the README).
 *
 * - `ddd_kit.id_generator.ids`: IDs issued through ClockSync (every generator the module builds),
 *   by `ddd_kit.id_generator.call` (`generate` | `generate_async`). An observable counter: the
 *   synchronous hot path only increments a number, read when metrics are collected.
 * - `id_generator.clock_wait` spans, `ddd_kit.id_generator.clock.waits` and
 *   `ddd_kit.id_generator.clock.wait.duration`: ClockSync waiting out a clock that moved back,
 *   outcome `caught_up` or `error` (ClockBackwardsError: too far behind, or still behind).
 * - `machine_id.acquire` / `machine_id.renew` / `machine_id.release` spans,
 *   `ddd_kit.machine_id.lease.renewals` (outcome `renewed` | `lost` | `error`) and
 *   `ddd_kit.machine_id.lease.losses`, with `ddd_kit.machine_id.namespace`.
 */
export const ID_GENERATOR_CALL = 'ddd_kit.id_generator.call';
export const MACHINE_ID_NAMESPACE = 'ddd_kit.machine_id.namespace';
export const MACHINE_ID_OPERATION = 'ddd_kit.machine_id.operation';

/** IDs issued so far, by call; read by the observable counter (cumulative since the process started). */
export const issued = { generate: 0, generateAsync: 0 };

interface GeneratorInstruments {
  readonly ids: ObservableCounter;
  readonly clockWaits: OperationInstruments;
}

export const generatorTelemetry = new LibraryTelemetry<GeneratorInstruments>(
  '@ddd-kit/id-generator',
  undefined,
  ID_GENERATOR_CALL,
  (meter) => {
    const ids = meter.createObservableCounter('ddd_kit.id_generator.ids', {
      unit: '{id}',
      description: 'IDs issued through ClockSync',
    });
    ids.addCallback((result) => {
      result.observe(issued.generate, { [ID_GENERATOR_CALL]: 'generate' });
      result.observe(issued.generateAsync, { [ID_GENERATOR_CALL]: 'generate_async' });
    });
    const count: Counter = meter.createCounter('ddd_kit.id_generator.clock.waits', {
      unit: '{wait}',
      description: 'Waits for a clock that moved back, by outcome',
    });
    const duration: Histogram = meter.createHistogram('ddd_kit.id_generator.clock.wait.duration', {
      unit: 's',
      description: 'Duration of waits for a clock that moved back',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    return { ids, clockWaits: { count, duration } };
  },
);

export const clockWaits = (instruments: GeneratorInstruments): OperationInstruments => instruments.clockWaits;

interface MachineIdInstruments {
  readonly renewals: OperationInstruments;
  readonly losses: Counter;
}

export const machineIdTelemetry = new LibraryTelemetry<MachineIdInstruments>(
  '@ddd-kit/id-generator',
  MACHINE_ID_NAMESPACE,
  MACHINE_ID_OPERATION,
  (meter) => ({
    renewals: {
      count: meter.createCounter('ddd_kit.machine_id.lease.renewals', {
        unit: '{renewal}',
        description: 'Heartbeats of the machine-ID lease, by outcome (renewed, lost, error)',
      }),
    },
    losses: meter.createCounter('ddd_kit.machine_id.lease.losses', {
      unit: '{loss}',
      description: 'Machine IDs found taken by another instance (a new one is acquired)',
    }),
  }),
);

export const renewals = (instruments: MachineIdInstruments): OperationInstruments => instruments.renewals;
export const noMetric = (): undefined => undefined;

/** Counts a lost machine ID. */
export function recordMachineIdLoss(namespace: string): void {
  machineIdTelemetry.instruments()?.losses.add(1, { [MACHINE_ID_NAMESPACE]: namespace });
}
