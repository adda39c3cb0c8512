// The names of an aggregate class come from its @Aggregate declaration, shared by every library.
export { getAggregateName, getQualifiedAggregateName } from '@ddd-kit/core/internal';
