// `@ddd-kit/core`: what every ddd-kit library shares. Driver-specific parts sit on their own
// entries (`/postgres`, `/redis`, `/telemetry`), so importing this one loads no driver.
export { DddKitError, DddKitTypeError, dddKitErrorCode } from './errors/ddd-kit.error.js';
export {
  DEFAULT_OPERATION_TIMEOUT_MS,
  isOperationTimeout,
  OperationTimeoutError,
  operationTimeoutProblem,
  withDeadline,
} from './deadline/with-deadline.js';
export { keyProblem, MAX_KEY_LENGTH } from './keys/key-problem.js';
export { processWide } from './process-wide.js';
export { PREPARE_KEY_LOOKUP, type PrepareKeyLookup } from './tokens/prepare-key-lookup.js';
export {
  Aggregate,
  AggregateDeclarationError,
  getAggregateMetadata,
  getAggregateMetadataByName,
  getAggregateName,
  getQualifiedAggregateName,
  type AggregateMetadata,
  type AggregateOptions,
} from './aggregate/aggregate.decorator.js';
export {
  DEFAULT_CONTEXT_NAME,
  formatNamedAggregate,
  isNamedAggregate,
  namedAggregateKey,
  type NamedAggregate,
} from './aggregate/named-aggregate.js';
