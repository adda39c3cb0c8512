import { AggregateDeclarationError } from '../errors.js';
import { processWide } from '../process-wide.js';
import { DEFAULT_CONTEXT_NAME, namedAggregateKey, type NamedAggregate } from './named-aggregate.js';

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

// One store per process: the id-generator and the repository (and two installed copies of
// either) read the same declarations.
const declarations = processWide('aggregate-declarations', () => ({
  byClass: new WeakMap<Function, AggregateMetadata>(),
  byName: new Map<string, AggregateMetadata>(),
}));

/**
 * getAggregateName's answers, dropped by every declaration: this copy's decorator drops them
 * itself; one of another installed copy shows as a new size of the shared `byName`.
 */
const names = { byClass: new WeakMap<Function, string>(), declared: 0 };

function assertName(what: string, value: unknown, optional: boolean): void {
  if (optional && value === undefined) return;
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > 256) {
    throw new AggregateDeclarationError(
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
    throw new AggregateDeclarationError('@Aggregate takes { name, context?, idGenerator? }');
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
    const existing = declarations.byName.get(key);
    // The same class name again is the same source evaluated twice (a reset module registry).
    if (
      existing &&
      existing.target !== target &&
      existing.target.name !== target.name &&
      existing.idGenerator !== metadata.idGenerator
    ) {
      throw new AggregateDeclarationError(
        `@Aggregate ${metadata.contextName}.${metadata.aggregateName} is declared by ${existing.target.name} with idGenerator ` +
          `${JSON.stringify(existing.idGenerator)} and by ${target.name} with ${JSON.stringify(metadata.idGenerator)}; declare one generator per aggregate`,
      );
    }
    declarations.byClass.set(target, metadata);
    declarations.byName.set(key, metadata);
    names.byClass = new WeakMap();
  };
}

/** The declaration of a class (inherited) or of an instance's class; undefined when none. */
export function getAggregateMetadata(target: Function | object): AggregateMetadata | undefined {
  let type: unknown = typeof target === 'function' ? target : (target as object)?.constructor;
  while (typeof type === 'function') {
    const metadata = declarations.byClass.get(type);
    if (metadata) return metadata;
    type = Object.getPrototypeOf(type);
  }
  return undefined;
}

/** The declaration recorded for a named aggregate, if any class declared it. */
export function getAggregateMetadataByName(named: NamedAggregate): AggregateMetadata | undefined {
  return declarations.byName.get(namedAggregateKey(named));
}

/**
 * The name events and errors use for an aggregate class: its `@Aggregate({ name })` (inherited
 * by subclasses), else the class's own name. Every write asks for it several times, so the
 * answer is kept per class (in this copy of the module), until the next declaration.
 */
export function getAggregateName(aggregate: Function | object): string {
  const type = typeof aggregate === 'function' ? aggregate : aggregate.constructor;
  if (names.declared !== declarations.byName.size) {
    names.byClass = new WeakMap();
    names.declared = declarations.byName.size;
  }
  let name = names.byClass.get(type);
  if (name === undefined) {
    name = getAggregateMetadata(type)?.aggregateName ?? type.name;
    names.byClass.set(type, name);
  }
  return name;
}

/**
 * The name that keys an aggregate's repository: `context.name` for an `@Aggregate` outside the
 * default context (two contexts may each have a 'user'), else the aggregate name.
 */
export function getQualifiedAggregateName(aggregate: Function | object): string {
  const type = typeof aggregate === 'function' ? aggregate : aggregate.constructor;
  const metadata = getAggregateMetadata(type);
  if (metadata === undefined) return type.name;
  return metadata.contextName === DEFAULT_CONTEXT_NAME
    ? metadata.aggregateName
    : `${metadata.contextName}.${metadata.aggregateName}`;
}
