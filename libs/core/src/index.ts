// `@ddd-kit/core`: what an application meets of the code the ddd-kit libraries share — the base
// of every ddd-kit error (with its stable `code`) and the one operation deadline's error. The
// rest of this package serves the other @ddd-kit packages: `/internal` (not for applications;
// it may change in any release), and `/postgres`, `/redis`, `/telemetry`, which load drivers.
export { DddKitError, DddKitTypeError, dddKitErrorCode, OperationTimeoutError } from './errors.js';
export type { SweepProgress } from './batches/batches.js';
