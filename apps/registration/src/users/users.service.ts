import { ConflictException, Injectable, Logger, NotFoundException, PreconditionFailedException } from '@nestjs/common';
import { AggregateIdGeneratorRegistrar } from '@ddd-kit/id-generator';
import { PrepareKeyStateError } from '@ddd-kit/prepare-key';
import { InjectRepository, InvalidAggregateIdError, OptimisticLockError, type IRepository } from '@ddd-kit/repository';
import { UserReadModel } from '../read-model/user-read-model.js';
import { User, type UserView } from './user.aggregate.js';
import { UsernamePrepareKey, type UsernameIndex } from './username.prepare-key.js';

const taken = (username: string) => new ConflictException(`username '${username}' is already taken`);
const stale = (id: string, expected: number, current: number | string) =>
  new PreconditionFailedException(`user '${id}' is at version ${current}, not ${expected}: reload it and retry`);

/**
 * Registration, rename and deletion. Usernames are reserved with PrepareKey before the user
 * is written, and released on every error path, so a failed request leaves no name held by
 * nobody. Usernames arrive already case-folded and validated.
 */
@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    @InjectRepository(User) private readonly users: IRepository<string, User>,
    private readonly usernames: UsernamePrepareKey,
    private readonly ids: AggregateIdGeneratorRegistrar,
    private readonly readModel: UserReadModel,
  ) {}

  /** `secretHash`: the hash of the secret the caller hands to the new user (auth/user-secret.ts). */
  async register(username: string, secretHash: string): Promise<UserView> {
    const user = User.register(this.ids.get(User).generate(), username, secretHash);
    // usingPrepare releases the name when the insert throws; a taken name never reaches it.
    return this.usernames.usingPrepare(username, newIndex(user), async (prepared) => {
      if (!prepared) throw taken(username);
      await this.users.insert(user);
      return user.toView();
    });
  }

  async get(id: string): Promise<UserView> {
    return (await this.load(id)).toView();
  }

  /**
   * Moves the user's reservation to the new name with the four-argument reprepare, then
   * writes the user where its version is still `expectedVersion`. When that write loses the
   * race the reservation is moved back, so the old name stays the user's and the new one is free.
   */
  async rename(id: string, username: string, expectedVersion: number): Promise<UserView> {
    const user = await this.load(id);
    if (user.oldVersion !== expectedVersion) throw stale(id, expectedVersion, user.oldVersion);
    const oldName = user.username;
    if (oldName === username) return user.toView();

    // The key change is conditional on the exact value held, so read it first.
    const oldIndex = await this.usernames.get(oldName);
    if (oldIndex?.userId !== user.id) throw stale(id, expectedVersion, 'a newer version');
    const index = newIndex(user);
    let moved: boolean;
    try {
      moved = await this.usernames.reprepare(oldName, oldIndex, username, index);
    } catch (err) {
      // The old name was no longer this user's: a concurrent rename or delete got there first.
      if (err instanceof PrepareKeyStateError) throw stale(id, expectedVersion, 'a newer version');
      throw err;
    }
    if (!moved) throw taken(username);

    user.rename(username);
    try {
      await this.users.update(user);
    } catch (err) {
      await this.moveBack(username, index, oldName, oldIndex);
      if (err instanceof OptimisticLockError) throw stale(id, expectedVersion, 'a newer version');
      throw err;
    }
    return user.toView();
  }

  async remove(id: string, expectedVersion?: number): Promise<void> {
    const user = await this.load(id);
    if (expectedVersion !== undefined && user.oldVersion !== expectedVersion) throw stale(id, expectedVersion, user.oldVersion);
    const index = await this.usernames.get(user.username);
    try {
      await this.users.remove(user);
    } catch (err) {
      if (err instanceof OptimisticLockError) throw stale(id, user.oldVersion, 'a newer version');
      throw err;
    }
    // Released after the user is gone: a crash in between leaves the name held by a user that no
    // longer exists, which the reservation reconciler (npm run reconcile) releases.
    if (index?.userId === user.id) await this.usernames.rollback(user.username, index);
  }

  async isAvailable(username: string): Promise<boolean> {
    return this.usernames.isAvailable(username);
  }

  findByUsername(username: string): Promise<UserView[]> {
    return this.readModel.findByUsername(username);
  }

  private async load(id: string): Promise<User> {
    try {
      const user = await this.users.findById(id);
      if (user) return user;
    } catch (err) {
      if (!(err instanceof InvalidAggregateIdError)) throw err;
    }
    throw new NotFoundException(`user '${id}' does not exist`);
  }

  /** Undoes a key change: takes the old name back, then releases the new one. */
  private async moveBack(newName: string, index: UsernameIndex, oldName: string, oldIndex: UsernameIndex): Promise<void> {
    try {
      if (await this.usernames.reprepare(newName, index, oldName, oldIndex)) return;
      // Someone took the old name in the instant it was free: the user keeps its record's old
      // name without a reservation. Release the new one at least, and say so loudly.
      this.logger.error(`username '${oldName}' of user '${index.userId}' was taken while a failed rename was undone`);
    } catch (err) {
      this.logger.error(`undoing the rename of user '${index.userId}' from '${oldName}' to '${newName}' failed`, err as Error);
    }
    await this.usernames.rollback(newName, index);
  }
}

function newIndex(user: User): UsernameIndex {
  return { userId: user.id, reservedAt: Date.now() };
}
