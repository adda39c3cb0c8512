import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AggregateIdGeneratorRegistrar } from '@ddd-kit/id-generator';
import {
  getAggregateName,
  InjectRepository,
  OptimisticLockError,
  retryOnConflict,
  type IRepository,
} from '@ddd-kit/repository';
import { UserReadModel } from '../read-model/user-read-model.js';
import { User, type UserView } from './user.aggregate.js';
import { isUserId } from './user-id.js';
import { UsernamePrepareKey } from './username.prepare-key.js';

export const missing = (id: string) => new NotFoundException(`user '${id}' does not exist`);

/** A lost race is no failure for a delete that stated no version: it reads the user again, this many times at most. */
const UNCONDITIONAL_DELETE_ATTEMPTS = 5;

/**
 * Registration, rename and deletion. The username is a `@UniqueKey` of User, so the repository
 * keeps its reservation in the safe order (register = reserve, insert; rename = reserve the new
 * name, update, release the old one; delete = delete, release) and releases a reservation only
 * when the write it guarded is known not to have happened. Usernames arrive already case-folded
 * and validated.
 *
 * Each command is a `@Transactional()` method: on PostgreSQL the reservations, the user row and
 * its outbox row commit together, in the request's one transaction (opened here, or by the
 * idempotency store when the request carries an Idempotency-Key, and joined here); elsewhere
 * each write stands alone. Errors are thrown as they are: ApiExceptionFilter answers them.
 */
@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: IRepository<string, User>,
    private readonly usernames: UsernamePrepareKey,
    private readonly ids: AggregateIdGeneratorRegistrar,
    private readonly readModel: UserReadModel,
  ) {}

  /** `secretHash`: the hash of the secret the caller hands to the new user (auth/user-secret.ts). */
  @Transactional()
  async register(username: string, secretHash: string): Promise<UserView> {
    // Waits out a clock step back (within the generator's brokenThresholdMs) instead of failing.
    const user = User.register(await this.ids.get(User).generateAsync(), username, secretHash);
    await this.users.insert(user);
    return user.toView();
  }

  async get(id: string): Promise<UserView> {
    return (await this.load(id)).toView();
  }

  /** The user `id`, or null when there is none: an ID the generator cannot have issued is answered without asking the store. */
  async find(id: string): Promise<User | null> {
    return isUserId(id) ? this.users.findById(id) : null;
  }

  /**
   * Writes the user where its version is still `expectedVersion`: the repository's one
   * conditional write decides (a stale version is its OptimisticLockError). A rename to the name
   * the user has writes nothing: its precondition is then the version just read.
   */
  @Transactional()
  async rename(id: string, username: string, expectedVersion: number): Promise<UserView> {
    const user = await this.load(id);
    if (user.username !== username) {
      user.rename(username);
      await this.users.update(user, { expectedVersion }).catch((error: unknown) => this.goneOr(id, error));
    } else if (user.oldVersion !== expectedVersion) {
      throw new OptimisticLockError(getAggregateName(User), id, expectedVersion, user.oldVersion);
    }
    return user.toView();
  }

  /**
   * Deletes the user where its version is still `expectedVersion`; without one, at whatever
   * version it has: a rename that commits between the read and the delete is no precondition
   * failed, the user is read again and deleted at its new version (a 204, or a 404 once it is
   * gone). Should it change under every attempt, the answer is a 409 to retry, never a 412.
   * The attempts share the request's one transaction: each statement of PostgreSQL's READ
   * COMMITTED sees what committed before it, the version a rename left included.
   */
  @Transactional()
  async remove(id: string, expectedVersion?: number): Promise<void> {
    if (expectedVersion !== undefined) return this.removeAt(id, expectedVersion);
    try {
      await retryOnConflict(() => this.removeAt(id), { attempts: UNCONDITIONAL_DELETE_ATTEMPTS });
    } catch (error) {
      if (!(error instanceof OptimisticLockError)) throw error;
      throw new ConflictException(`user '${id}' kept changing while it was being deleted; retry`);
    }
  }

  async isAvailable(username: string): Promise<boolean> {
    return this.usernames.isAvailable(username);
  }

  findByUsername(username: string): Promise<UserView[]> {
    return this.readModel.findByUsername(username);
  }

  /** One attempt of `remove`: nothing is written when it fails. */
  private async removeAt(id: string, expectedVersion?: number): Promise<void> {
    const user = await this.load(id);
    await this.users
      .remove(user, expectedVersion === undefined ? undefined : { expectedVersion })
      .catch((error: unknown) => this.goneOr(id, error));
  }

  private async load(id: string): Promise<User> {
    const user = await this.find(id);
    if (!user) throw missing(id);
    return user;
  }

  /**
   * A conditional write that matched nothing because the user was deleted meanwhile (a rename or
   * a delete that lost its race to a delete) is about a user that does not exist: a 404. Any
   * other error, a version that moved on included, goes on as it is.
   */
  private async goneOr(id: string, error: unknown): Promise<never> {
    if (error instanceof OptimisticLockError && !(await this.users.existsById(id))) throw missing(id);
    throw error;
  }
}
