import type { DataSyncEvent } from '@ddd-kit/repository';
import { InMemoryReadReplica } from '@ddd-kit/repository/reconciliation';
import type { UserSnapshot, UserView } from '../users/user.aggregate.js';
import { UserReadModel } from './user-read-model.js';

/** One process's read model: each instance of the app keeps its own (use Mongo to share one). */
export class InMemoryUserReadModel extends UserReadModel {
  private readonly replica = new InMemoryReadReplica<string, UserSnapshot>();

  async findByUsername(username: string): Promise<UserView[]> {
    return this.replica
      .find((snapshot) => snapshot.username === username)
      .map(({ id, version, snapshot }) => ({ id, username: snapshot.username, version }));
  }

  async apply(events: readonly DataSyncEvent<string, UserSnapshot>[]): Promise<void> {
    this.replica.apply(events);
  }

  listVersions(page: { cursor: string | null; limit: number }) {
    return this.replica.listVersions(page);
  }

  upsert(id: string, version: number, snapshot: UserSnapshot): Promise<void> {
    return this.replica.upsert(id, version, snapshot);
  }

  purge(id: string): Promise<void> {
    return this.replica.purge(id);
  }
}
