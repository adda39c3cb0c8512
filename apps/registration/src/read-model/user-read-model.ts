import type { DataSyncEvent } from '@ddd-kit/repository';
import type { ReadReplica, ReplicaPage } from '@ddd-kit/repository/reconciliation';
import type { UserSnapshot, UserView } from '../users/user.aggregate.js';

/**
 * The query side of users: `GET /users?username=` reads it. Data-sync events feed it (see
 * UserReadModelProjector) and ReadReplicaReconciler repairs it through the ReadReplica port.
 * `apply` ignores an UPSERT older than what it holds (handlers of concurrent writes may finish
 * out of order); `upsert` and `purge` (reconciliation) always apply.
 */
export abstract class UserReadModel implements ReadReplica<string, UserSnapshot> {
  abstract findByUsername(username: string): Promise<UserView[]>;
  abstract apply(events: readonly DataSyncEvent<string, UserSnapshot>[]): Promise<void>;
  abstract listVersions(page: { cursor: string | null; limit: number }): Promise<ReplicaPage<string>>;
  abstract upsert(id: string, version: number, snapshot: UserSnapshot): Promise<void>;
  abstract purge(id: string): Promise<void>;
}
