import { PreparableKey, PrepareKey } from '@ddd-kit/prepare-key';

/** Who holds a username: the user's ID. Reconciliation asks the repository whether it still does. */
export interface UsernameIndex {
  userId: string;
}

@PreparableKey('username')
export abstract class UsernamePrepareKey extends PrepareKey<UsernameIndex> {
  /** True when nobody holds `username` (an expired record counts as free). */
  async isAvailable(username: string): Promise<boolean> {
    return (await this.get(username)) === undefined;
  }
}
