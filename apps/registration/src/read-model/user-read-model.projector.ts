import { Injectable } from '@nestjs/common';
import { OnDataSync, type DataSyncEvent } from '@ddd-kit/repository';
import { User, type UserSnapshot } from '../users/user.aggregate.js';
import { UserReadModel } from './user-read-model.js';

/** Keeps the read model in step with every successful write of a User. */
@Injectable()
export class UserReadModelProjector {
  constructor(private readonly readModel: UserReadModel) {}

  @OnDataSync(User)
  async project(events: readonly DataSyncEvent<string, UserSnapshot>[]): Promise<void> {
    await this.readModel.apply(events);
  }
}
