import { UnknownIdGeneratorError } from '../errors/unknown-id-generator.error.js';
import type { IdGenerator } from '../id-generator.interfaces.js';
import { getAggregateMetadataByName } from './aggregate.decorator.js';
import { AggregateIdGeneratorFactory } from './aggregate-id-generator-factory.js';
import { formatNamedAggregate, type NamedAggregate } from './named-aggregate.js';

/**
 * The last link of the chain. The aggregate's `idGenerator` name, else its aggregate name, is
 * looked up among the configured generators; failing that, `fallback()` makes a new generator
 * (IdGeneratorModule: a clock-synced CosIdGenerator on the global machine ID, one per
 * aggregate). An `idGenerator` that names no configured generator is an error, not a silent
 * fallback: it is a declaration, and its absence is most likely a typo.
 */
export class CosIdAggregateIdGeneratorFactory extends AggregateIdGeneratorFactory {
  constructor(
    private readonly generators: ReadonlyMap<string, IdGenerator>,
    private readonly fallback: (namedAggregate: NamedAggregate) => IdGenerator,
  ) {
    super();
  }

  create(namedAggregate: NamedAggregate): IdGenerator {
    const declared = getAggregateMetadataByName(namedAggregate)?.idGenerator;
    if (declared !== undefined) {
      const generator = this.generators.get(declared);
      if (!generator) throw new UnknownIdGeneratorError(declared, [...this.generators.keys()], `@Aggregate ${formatNamedAggregate(namedAggregate)}`);
      return generator;
    }
    return this.generators.get(namedAggregate.aggregateName) ?? this.fallback(namedAggregate);
  }
}
