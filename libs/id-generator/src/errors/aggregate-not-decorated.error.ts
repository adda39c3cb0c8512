import { IdGeneratorError } from './id-generator.error.js';

/** An aggregate ID was asked for a class (or object) that is not decorated with `@Aggregate`. */
export class AggregateNotDecoratedError extends IdGeneratorError {
  override readonly code = 'AGGREGATE_NOT_DECORATED';

  constructor(what: string) {
    super(`${what} is not an aggregate: decorate its class with @Aggregate({ name: '...' }) or pass a NamedAggregate`);
  }
}
