// `@ddd-kit/core/internal`: what the other @ddd-kit packages share and applications do not use
// (the aggregate declarations behind `@Aggregate`, the operation deadline, key checks, the
// process-wide registry, the PrepareKey lookup the repository uses). Not a public API: it changes
// with the packages that import it. Importing it loads no driver.
export { AggregateDeclarationError } from '../errors.js';
export {
  DEFAULT_OPERATION_TIMEOUT_MS,
  isOperationTimeout,
  operationTimeoutProblem,
  withDeadline,
} from '../deadline/with-deadline.js';
export {
  forEachLimited,
  inBatches,
  progressMeter,
  readAhead,
  type ProgressMeter,
  type SweepProgress,
} from '../batches/batches.js';
export { keyProblem, MAX_KEY_LENGTH } from '../keys/key-problem.js';
export { processWide } from '../process-wide.js';
export { PREPARE_KEY_LOOKUP, type PrepareKeyLookup } from '../tokens/prepare-key-lookup.js';
export {
  Aggregate,
  getAggregateMetadata,
  getAggregateMetadataByName,
  getAggregateName,
  getQualifiedAggregateName,
  type AggregateMetadata,
  type AggregateOptions,
} from '../aggregate/aggregate.decorator.js';
export {
  DEFAULT_CONTEXT_NAME,
  formatNamedAggregate,
  isNamedAggregate,
  namedAggregateKey,
  type NamedAggregate,
} from '../aggregate/named-aggregate.js';
