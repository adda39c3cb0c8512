import {
  ConflictException,
  HttpException,
  Injectable,
  Logger,
  NotFoundException,
  PreconditionFailedException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { AggregateIdGeneratorRegistrar } from '@ddd-kit/id-generator';
import {
  InjectRepository,
  InvalidAggregateIdError,
  OptimisticLockError,
  UniqueKeyViolationError,
  type IRepository,
} from '@ddd-kit/repository';
import { ConnectionWaitTimeoutError } from '../backends/postgres-pool.js';
import { loggableError, logText } from '../common/log-text.js';
import { UserReadModel } from '../read-model/user-read-model.js';
import { RequestTransaction } from './request-transaction.js';
import { User, type UserView } from './user.aggregate.js';
import { isUserId } from './user-id.js';
import { UsernamePrepareKey } from './username.prepare-key.js';

const stale = (id: string, expected: number, current: number | string) =>
  new PreconditionFailedException(`user '${id}' is at version ${current}, not ${expected}: reload it and retry`);
export const missing = (id: string) => new NotFoundException(`user '${id}' does not exist`);

/** A lost race is no failure for a delete that stated no version: it reads the user again, this many times at most. */
const UNCONDITIONAL_DELETE_ATTEMPTS = 5;

/**
 * Registration, rename and deletion: the HTTP concerns only (versions, status codes). The
 * username is a `@UniqueKey` of User, so the repository keeps its reservation in the safe order
 * (register = reserve, insert; rename = reserve the new name, update, release the old one;
 * delete = delete, release) and releases a reservation only when the write it guarded is known
 * not to have happened. Usernames arrive already case-folded and validated.
 */
@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    @InjectRepository(User) private readonly users: IRepository<string, User>,
    private readonly usernames: UsernamePrepareKey,
    private readonly ids: AggregateIdGeneratorRegistrar,
    private readonly readModel: UserReadModel,
    private readonly transaction: RequestTransaction,
  ) {}

  /** `secretHash`: the hash of the secret the caller hands to the new user (auth/user-secret.ts). */
  async register(username: string, secretHash: string): Promise<UserView> {
    // Waits out a clock step back (within the generator's brokenThresholdMs) instead of failing.
    const id = await this.ids
      .get(User)
      .generateAsync()
      .catch((err: unknown) => Promise.reject(this.unavailable(err, 'issuing a user ID')));
    const user = User.register(id, username, secretHash);
    await this.inTransaction(`registering '${username}'`, () => this.write(user.id, () => this.users.insert(user)));
    return user.toView();
  }

  async get(id: string): Promise<UserView> {
    return (await this.load(id)).toView();
  }

  /**
   * The user `id`, or null when there is none: an ID the generator cannot have issued is
   * answered without asking the store. A store that fails to answer is a 503.
   */
  async find(id: string): Promise<User | null> {
    if (!isUserId(id)) return null;
    try {
      return await this.users.findById(id);
    } catch (err) {
      if (err instanceof InvalidAggregateIdError) return null;
      throw this.unavailable(err, `reading user '${id}'`);
    }
  }

  /**
   * Writes the user where its version is still `expectedVersion`: the repository's one
   * conditional write decides, and a stale version is its OptimisticLockError (see write). A
   * rename to the name the user has writes nothing: its precondition is then the version just read.
   */
  async rename(id: string, username: string, expectedVersion: number): Promise<UserView> {
    return this.inTransaction(`renaming user '${id}'`, async () => {
      const user = await this.load(id);
      if (user.username === username) {
        if (user.oldVersion !== expectedVersion) throw stale(id, expectedVersion, user.oldVersion);
        return user.toView();
      }
      user.rename(username);
      await this.write(id, () => this.users.update(user, { expectedVersion }));
      return user.toView();
    });
  }

  /**
   * Deletes the user where its version is still `expectedVersion`; without one, at whatever
   * version it has: a rename that commits between the read and the delete is no precondition
   * failed, the user is read again and deleted at its new version (a 204, or a 404 once it is
   * gone). Should it change under every attempt, the answer is a 409 to retry, never a 412.
   */
  async remove(id: string, expectedVersion?: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inTransaction(`deleting user '${id}'`, async () => {
          const user = await this.load(id);
          await this.write(id, () =>
            this.users.remove(user, expectedVersion === undefined ? undefined : { expectedVersion }),
          );
        });
      } catch (err) {
        // Without If-Match a 412 can only be a lost race.
        if (expectedVersion !== undefined || !(err instanceof PreconditionFailedException)) throw err;
        if (attempt === UNCONDITIONAL_DELETE_ATTEMPTS)
          throw new ConflictException(`user '${id}' kept changing while it was being deleted; retry`);
      }
    }
  }

  async isAvailable(username: string): Promise<boolean> {
    return this.usernames.isAvailable(username);
  }

  findByUsername(username: string): Promise<UserView[]> {
    return this.readModel.findByUsername(username);
  }

  /** One request's writes in one transaction where the store has them (a failure to open or commit it is a 503). */
  private async inTransaction<R>(what: string, work: () => Promise<R>): Promise<R> {
    try {
      return await this.transaction.run(work);
    } catch (err) {
      throw this.unavailable(err, what);
    }
  }

  private async load(id: string): Promise<User> {
    const user = await this.find(id);
    if (!user) throw missing(id);
    return user;
  }

  /** A store that fails to answer is a 503 (retry later), not a bug of the service (500). */
  private unavailable(err: unknown, what: string): HttpException {
    if (err instanceof HttpException) return err;
    this.logFailure(`${what} failed`, err);
    // Nothing was sent to the store: say why, the client may retry as it is.
    if (err instanceof ConnectionWaitTimeoutError) return new ServiceUnavailableException(err.message);
    return new ServiceUnavailableException(`the store did not answer while ${what}; retry later`);
  }

  /**
   * Runs one write and maps what it says to HTTP: a taken name is 409; a version conflict (the
   * user not at the version the write expected) is 412, or 404 when the user is gone (a rename
   * racing a delete); any other failure leaves the outcome unknown (a lost reply, a timeout),
   * which is a 503 — the client reads the user again.
   */
  private async write(id: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if (err instanceof UniqueKeyViolationError) throw new ConflictException(`username '${err.key}' is already taken`);
      if (err instanceof OptimisticLockError) {
        const current = await this.users.currentVersion(id).catch(() => undefined);
        if (current === -1) throw missing(id);
        throw stale(id, err.expectedVersion, current ?? 'a newer version');
      }
      this.logFailure(`a write of user '${id}' failed; its outcome is unknown`, err);
      throw new ServiceUnavailableException(
        `the store did not confirm the write of user '${id}'; read the user again before retrying`,
      );
    }
  }

  /** Logs a failure with its error, both escaped: they may quote the request (an ID, a name, a driver's message). */
  private logFailure(text: string, err: unknown): void {
    const { message, stack } = loggableError(err);
    if (stack === undefined) this.logger.error(`${logText(text)}: ${message}`);
    else this.logger.error(logText(text), stack);
  }
}
