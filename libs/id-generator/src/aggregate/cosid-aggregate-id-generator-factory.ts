import { Logger } from '@nestjs/common';
import type { IdGenerator } from '../id-generator.interfaces.js';
import { AggregateIdGeneratorFactory } from './aggregate-id-generator-factory.js';
import { formatNamedAggregate, getAggregateMetadataByName, type NamedAggregate } from '@ddd-kit/core/internal';

/**
 * The last link of the chain. The aggregate's `idGenerator` name, else its aggregate name, is
 * looked up among the configured generators; failing that, `fallback()` makes a new generator
 * (IdGeneratorModule: a clock-synced CosIdGenerator on the global machine ID, one per
 * aggregate). A declared `idGenerator` that names no configured generator falls back too, as
 * the contract says, but with a warning: it is most likely a typo or a missing `generators` entry.
 */
export class CosIdAggregateIdGeneratorFactory extends AggregateIdGeneratorFactory {
  private readonly logger = new Logger('AggregateIdGenerator');

  constructor(
    private readonly generators: ReadonlyMap<string, IdGenerator>,
    private readonly fallback: (namedAggregate: NamedAggregate) => IdGenerator,
  ) {
    super();
  }

  create(namedAggregate: NamedAggregate): IdGenerator {
    const declared = getAggregateMetadataByName(namedAggregate)?.idGenerator;
    const name = declared ?? namedAggregate.aggregateName;
    const generator = this.generators.get(name);
    if (generator) return generator;
    if (declared !== undefined) {
      this.logger.warn(
        `@Aggregate ${formatNamedAggregate(namedAggregate)} names idGenerator '${declared}', which is not among the configured generators ` +
          `(${[...this.generators.keys()].join(', ') || 'none'}); it gets the built-in CosId generator instead`,
      );
    }
    return this.fallback(namedAggregate);
  }
}
