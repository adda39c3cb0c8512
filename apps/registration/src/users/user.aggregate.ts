import { Aggregate } from '@ddd-kit/id-generator';
import { AggregateRoot } from '@ddd-kit/repository';

/** What the read model and the API see of a user. */
export interface UserView {
  id: string;
  username: string;
  version: number;
}

export interface UserSnapshot {
  id: string;
  username: string;
}

@Aggregate({ name: 'user', context: 'registration' })
export class User extends AggregateRoot<string, UserSnapshot> {
  username!: string;
  /**
   * SHA-256 (hex) of the secret that authorises changes to this user (see auth/user-secret.ts).
   * Stored with the user; never in a snapshot, a view or a response.
   */
  secretHash!: string;

  /** A new user; its ID is assigned by the caller from the aggregate's ID generator. */
  static register(id: string, username: string, secretHash: string): User {
    const user = new User(id);
    user.username = username;
    user.secretHash = secretHash;
    return user;
  }

  rename(username: string): void {
    this.username = username;
  }

  /** What read models receive: field by field, so the secret's hash never reaches one. */
  override toSnapshot(): UserSnapshot {
    return { id: this.id, username: this.username };
  }

  /** The API's view: the stored version (after a write, the version that write stored). */
  toView(): UserView {
    return { id: this.id, username: this.username, version: this.oldVersion };
  }
}
