/** An aggregate identified by its bounded context and name: the key generators are chosen and cached by. */
export interface NamedAggregate {
  readonly contextName: string;
  readonly aggregateName: string;
}

/** The context of an aggregate declared without one. */
export const DEFAULT_CONTEXT_NAME = 'default';

export function isNamedAggregate(value: unknown): value is NamedAggregate {
  const v = value as Partial<NamedAggregate> | null;
  return !!v && typeof v === 'object' && typeof v.contextName === 'string' && typeof v.aggregateName === 'string';
}

/** One string per (context, name) pair, unambiguous whatever characters the names hold. */
export function namedAggregateKey(named: NamedAggregate): string {
  return `${named.contextName.length}:${named.contextName}/${named.aggregateName}`;
}

export function formatNamedAggregate(named: NamedAggregate): string {
  return `${named.contextName}.${named.aggregateName}`;
}
