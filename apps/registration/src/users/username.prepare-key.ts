import { PreparableKey, PrepareKey } from '@ddd-kit/prepare-key';

/**
 * Who holds a username, and since when. Reconciliation asks the repository whether the user
 * still has the name; `reservedAt` lets it spare reservations of requests still in flight
 * (a registration between its reservation and its insert has no user yet).
 */
export interface UsernameIndex {
  userId: string;
  reservedAt: number;
}

@PreparableKey('username')
export abstract class UsernamePrepareKey extends PrepareKey<UsernameIndex> {
  /** True when nobody holds `username` (an expired record counts as free). */
  async isAvailable(username: string): Promise<boolean> {
    return (await this.get(username)) === undefined;
  }
}
