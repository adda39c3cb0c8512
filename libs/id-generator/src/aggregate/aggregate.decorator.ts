import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import { AggregateNotDecoratedError } from '../errors/aggregate-not-decorated.error.js';
import { DEFAULT_CONTEXT_NAME, isNamedAggregate, namedAggregateKey, type NamedAggregate } from './named-aggregate.js';

export interface AggregateOptions {
  /** The aggregate's name, e.g. 'user'. */
  name: string;
  /** Its bounded context; default 'default'. */
  context?: string;
  /** Name of the generator (in IdGeneratorModule `generators`) for its IDs; default: the aggregate name, if configured. */
  idGenerator?: string;
}

/** What `@Aggregate` recorded for a class. */
export interface AggregateMetadata extends NamedAggregate {
  readonly idGenerator?: string;
  readonly target: Function;
}

const BY_CLASS = new WeakMap<Function, AggregateMetadata>();
const BY_NAME = new Map<string, AggregateMetadata>();

function assertName(what: string, value: unknown, optional: boolean): void {
  if (optional && value === undefined) return;
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > 256) {
    throw new IdGeneratorOptionsError(
      `@Aggregate ${what} must be a non-empty string of at most 256 characters, got ${JSON.stringify(value)}`,
    );
  }
}

/**
 * Declares a class as a named aggregate (and optionally which generator makes its IDs). A
 * subclass inherits the declaration unless it declares its own. Two classes may share a named
 * aggregate only if they agree on its generator.
 */
export function Aggregate(options: AggregateOptions): ClassDecorator {
  if (!options || typeof options !== 'object')
    throw new IdGeneratorOptionsError('@Aggregate takes { name, context?, idGenerator? }');
  assertName('name', options.name, false);
  assertName('context', options.context, true);
  assertName('idGenerator', options.idGenerator, true);
  return (target) => {
    const metadata: AggregateMetadata = Object.freeze({
      contextName: options.context ?? DEFAULT_CONTEXT_NAME,
      aggregateName: options.name,
      idGenerator: options.idGenerator,
      target,
    });
    const key = namedAggregateKey(metadata);
    const existing = BY_NAME.get(key);
    // The same class name again is the same source evaluated twice (a reset module registry).
    if (
      existing &&
      existing.target !== target &&
      existing.target.name !== target.name &&
      existing.idGenerator !== metadata.idGenerator
    ) {
      throw new IdGeneratorOptionsError(
        `@Aggregate ${metadata.contextName}.${metadata.aggregateName} is declared by ${existing.target.name} with idGenerator ` +
          `${JSON.stringify(existing.idGenerator)} and by ${target.name} with ${JSON.stringify(metadata.idGenerator)}; declare one generator per aggregate`,
      );
    }
    BY_CLASS.set(target, metadata);
    BY_NAME.set(key, metadata);
  };
}

/** The declaration of a class (inherited) or of an instance's class; undefined when none. */
export function getAggregateMetadata(target: Function | object): AggregateMetadata | undefined {
  let type: unknown = typeof target === 'function' ? target : (target as object)?.constructor;
  while (typeof type === 'function') {
    const metadata = BY_CLASS.get(type);
    if (metadata) return metadata;
    type = Object.getPrototypeOf(type);
  }
  return undefined;
}

/** The declaration recorded for a named aggregate, if any class declared it. */
export function getAggregateMetadataByName(named: NamedAggregate): AggregateMetadata | undefined {
  return BY_NAME.get(namedAggregateKey(named));
}

/**
 * `{ contextName, aggregateName }` of an `@Aggregate` class, an instance of one, or a
 * NamedAggregate itself. Throws AggregateNotDecoratedError otherwise.
 */
export function getNamedAggregate(aggregate: Function | object): NamedAggregate {
  const metadata = getAggregateMetadata(aggregate);
  if (metadata) return { contextName: metadata.contextName, aggregateName: metadata.aggregateName };
  if (isNamedAggregate(aggregate))
    return { contextName: aggregate.contextName, aggregateName: aggregate.aggregateName };
  throw new AggregateNotDecoratedError(describe(aggregate));
}

function describe(value: unknown): string {
  if (typeof value === 'function') return `class ${value.name || '(anonymous)'}`;
  if (value && typeof value === 'object') return `an instance of ${value.constructor?.name ?? 'Object'}`;
  return String(value);
}
