import { PreparableKey, PrepareKey } from '@ddd-kit/prepare-key';
import type { UniqueKeyOwner } from '@ddd-kit/repository';

/**
 * The reservations of usernames. The user repository keeps them (`@UniqueKey('username')` on
 * User): a reservation names its owner and when it was taken, `{ aggregate: 'user', id, at }`.
 * The app reads them only to say whether a name is free.
 */
@PreparableKey('username')
export abstract class UsernamePrepareKey extends PrepareKey<UniqueKeyOwner> {
  /** True when nobody holds `username` (an expired record counts as free). */
  async isAvailable(username: string): Promise<boolean> {
    return (await this.get(username)) === undefined;
  }
}
