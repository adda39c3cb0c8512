import { DEFAULT_CONTEXT_NAME, getAggregateMetadata } from '@ddd-kit/id-generator';

/**
 * The name events and errors use for an aggregate class: its `@Aggregate({ name })` (from
 * @ddd-kit/id-generator, inherited by subclasses), else the class's own name.
 */
export function getAggregateName(aggregate: Function): string {
  return getAggregateMetadata(aggregate)?.aggregateName ?? aggregate.name;
}

/**
 * The name that keys an aggregate's repository: `context.name` for an `@Aggregate` outside the
 * default context (two contexts may each have a 'user'), else the aggregate name.
 */
export function getQualifiedAggregateName(aggregate: Function): string {
  const metadata = getAggregateMetadata(aggregate);
  if (metadata === undefined) return aggregate.name;
  return metadata.contextName === DEFAULT_CONTEXT_NAME
    ? metadata.aggregateName
    : `${metadata.contextName}.${metadata.aggregateName}`;
}
