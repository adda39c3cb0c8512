import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import type { IRepository } from '../repository/repository.interfaces.js';
import type { ReplicaEntry } from './read-replica.interfaces.js';

export const ReplicaEntryStatus = {
  /** The replica holds the write model's current version. */
  OK: 'OK',
  /** The replica holds another version than the write model (normally an older one): resync it. */
  STALE: 'STALE',
  /** The write model has no such aggregate (`currentVersion` is -1): purge it. */
  ORPHAN: 'ORPHAN',
} as const;
export type ReplicaEntryStatus = (typeof ReplicaEntryStatus)[keyof typeof ReplicaEntryStatus];

export interface ReplicaEntryCheck<ID extends AggregateId = AggregateId> {
  id: ID;
  replicaVersion: number;
  /** The write model's `currentVersion`: -1 when it has no such aggregate. */
  writeVersion: number;
  status: ReplicaEntryStatus;
}

/**
 * OK when the versions agree, ORPHAN when the write model has none (-1), STALE otherwise. A
 * replica *ahead* of the write model (an id removed and inserted again while the replica kept
 * the old entry) is STALE too: the write model is the authority either way.
 */
export function classifyReplicaEntry(replicaVersion: number, writeVersion: number): ReplicaEntryStatus {
  if (writeVersion === -1) return ReplicaEntryStatus.ORPHAN;
  return replicaVersion === writeVersion ? ReplicaEntryStatus.OK : ReplicaEntryStatus.STALE;
}

/** Checks one replica entry against the write model's authoritative version. */
export async function checkReplicaEntry<ID extends AggregateId>(
  repository: Pick<IRepository<ID, any>, 'currentVersion'>,
  entry: ReplicaEntry<ID>,
): Promise<ReplicaEntryCheck<ID>> {
  const writeVersion = await repository.currentVersion(entry.id);
  return {
    id: entry.id,
    replicaVersion: entry.version,
    writeVersion,
    status: classifyReplicaEntry(entry.version, writeVersion),
  };
}
