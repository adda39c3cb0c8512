// `@ddd-kit/core/telemetry`: the OpenTelemetry helper every ddd-kit library reports through
// (`@opentelemetry/api` is an optional peer: without it, nothing is recorded and nothing is loaded).
export {
  ActiveOperation,
  DURATION_BUCKETS,
  ERROR_TYPE,
  LibraryTelemetry,
  OUTCOME,
  errorType,
  otel,
  type OperationInstruments,
} from './library-telemetry.js';
