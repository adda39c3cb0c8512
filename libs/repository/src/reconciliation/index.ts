// `@ddd-kit/repository/reconciliation`: read replicas checked against the write model and
// repaired (reconcileUniqueKeys, for the reservations of unique keys, is in the main entry).
export type { ReadReplica, ReplicaEntry, ReplicaPage } from './read-replica.interfaces.js';
export { checkReplicaEntry, classifyReplicaEntry, ReplicaEntryStatus } from './replica-entry-status.js';
export type { ReplicaEntryCheck } from './replica-entry-status.js';
export { ReadReplicaReconciler } from './read-replica.reconciler.js';
export type { ReadReplicaReconcilerOptions, ReconciliationReport } from './read-replica.reconciler.js';
export { InMemoryReadReplica } from './in-memory-read-replica.js';
export type { ReplicaRecord } from './in-memory-read-replica.js';
